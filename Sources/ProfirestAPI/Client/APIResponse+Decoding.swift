import Foundation

extension APIResponse {
    /// The body decoded as `T` (a model, `JSONValue`, `Data`; an optional for an empty body), with the library's
    /// rules for dates and nullable members.
    ///
    /// - Parameter type: the type to decode the body as; left out, the annotation gives it.
    /// - Returns: the body as `T`; nil for an empty body when `T` is an optional.
    /// - Throws: ``ProfirestAPIError`` `invalid_response` when the body is not a `T`, its detail naming the JSON path
    ///   that failed.
    ///
    /// ```swift
    /// let customer: Customer = try r.decode()
    /// ```
    public func decode<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try ResponseDecoding.decode(T.self, from: self, errors: ErrorFactory(language: nil, redaction: Redaction(secrets: [])))
    }

    /// The body as JSON; nil when it is empty.
    ///
    /// ```swift
    /// r.json?["id"]?.stringValue
    /// ```
    public var json: JSONValue? {
        get throws { try decode(as: JSONValue?.self) }
    }
}
