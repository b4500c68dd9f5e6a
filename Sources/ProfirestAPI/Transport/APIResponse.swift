import Foundation

/// A whole HTTP response — status, headers and bytes: what a transport returns for every attempt, and what
/// `api.send(_:_:body:options:)` returns for a success, so an app can read ETag, Location and other headers.
///
/// ```swift
/// let r = try await api.send("GET", "/customers/\(id)"); let etag = r.header("ETag")
/// ```
public struct APIResponse: Sendable, Hashable {
    /// The HTTP status; from `api.send` a 2xx, or 304 after `ifNoneMatch`.
    public var status: Int
    /// The headers as received; read them with ``header(_:)``, which ignores case.
    public var headers: [String: String]
    /// The body bytes; empty for 204 and 304.
    public var data: Data

    /// A response as a transport (or a test double) builds it.
    ///
    /// ```swift
    /// APIResponse(status: 200, headers: ["Content-Type": "application/json"], data: Data("{}".utf8))
    /// ```
    public init(status: Int, headers: [String: String] = [:], data: Data = Data()) {
        self.status = status
        self.headers = headers
        self.data = data
    }

    /// A header's value, looked up without regard to case. Usage: `r.header("etag")`
    public func header(_ name: String) -> String? { HTTPHeaders.value(name, in: headers) }
}
