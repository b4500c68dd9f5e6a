import Foundation

/// A whole HTTP response — status, headers and bytes — so that an app can read what a model does not carry (an
/// `ETag`, a `Location`): what `api.send(_:_:body:options:)` returns for a success, and what a transport returns for
/// every attempt.
///
/// ```swift
/// let r = try await api.send("GET", "/customers/\(id)"); let etag = r.header("ETag")
/// ```
public struct APIResponse: Sendable, Hashable {
    /// The HTTP status: from `api.send` a 2xx, or 304 after `ifNoneMatch`; from a transport, whatever came.
    public var status: Int
    /// The headers as received, with their names as the server wrote them; read one with ``header(_:)``, which
    /// ignores case.
    public var headers: [String: String]
    /// The body bytes, to decode with `decode(as:)`; empty for 204 and 304.
    public var data: Data

    /// Makes a response, as a transport of your own or a test double answers the library.
    ///
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - headers: the headers, as received.
    ///   - data: the body bytes; empty for none.
    ///
    /// ```swift
    /// APIResponse(status: 200, headers: ["Content-Type": "application/json"], data: Data("{}".utf8))
    /// ```
    public init(status: Int, headers: [String: String] = [:], data: Data = Data()) {
        self.status = status
        self.headers = headers
        self.data = data
    }

    /// Reads a header without regard to the case of its name, since servers and proxies spell them differently.
    ///
    /// - Parameter name: the header's name, in any case (`ETag`, `etag`).
    /// - Returns: the header's value, or nil when the answer has none.
    ///
    /// ```swift
    /// let etag = response.header("ETag")
    /// ```
    public func header(_ name: String) -> String? { HTTPHeaders.value(name, in: headers) }
}
