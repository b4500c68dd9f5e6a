import Foundation

extension APIResponse {
    /// The body decoded as `T` (a model, `JSONValue`, `Data`; an optional for an empty body), with the library's
    /// rules for dates and nullable members.
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
