import Foundation

/// A successful response with its status, headers and bytes — for ETag, Location and other headers.
///
/// ```swift
/// let r = try await api.send("GET", "/customers/\(id)"); let etag = r.header("ETag")
/// ```
public struct APIResponse: Sendable, Hashable {
    /// The HTTP status (2xx, or 304 after `ifNoneMatch`). Usage: `r.status == 201`
    public let status: Int
    /// The headers as received; read them with ``header(_:)``. Usage: `r.headers.count`
    public let headers: [String: String]
    /// The body bytes; empty for 204 and 304. Usage: `r.data.count`
    public let data: Data

    /// Usage: `APIResponse(status: 200, headers: [:], data: Data())`
    public init(status: Int, headers: [String: String], data: Data) {
        self.status = status
        self.headers = headers
        self.data = data
    }

    /// A header's value, looked up without regard to case. Usage: `r.header("etag")`
    public func header(_ name: String) -> String? { HTTPHeaders.value(name, in: headers) }

    /// The body decoded as `T` (a model, `JSONValue`, `Data`; an optional for an empty body).
    /// Usage: `let customer: Customer = try r.decode()`
    public func decode<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try ResponseDecoding.decode(T.self, from: HTTPResponse(status: status, headers: headers, body: data),
                                    errors: ErrorFactory(language: nil, redaction: Redaction(secrets: [])))
    }

    /// The body as JSON; nil when it is empty. Usage: `r.json?["id"]?.stringValue`
    public var json: JSONValue? {
        get throws { try decode(as: JSONValue?.self) }
    }
}
