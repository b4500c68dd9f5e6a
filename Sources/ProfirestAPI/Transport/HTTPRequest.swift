import Foundation

/// One HTTP request as the library hands it to a transport, complete — the URL absolute, every header final — so
/// that a transport sends it without adding anything.
///
/// ```swift
/// let request = HTTPRequest(method: "GET", url: URL(string: "https://api.mujprofirest.cz/v2/connection")!)
/// ```
public struct HTTPRequest: Sendable, Hashable {
    /// The HTTP method, upper case (`GET`, `POST`…).
    public var method: String
    /// The absolute URL, query included.
    public var url: URL
    /// The headers to send, exactly as named here; read one without regard to case with ``header(_:)``.
    public var headers: [String: String]
    /// The body bytes, or nil for a request without one.
    public var body: Data?
    /// How long this attempt may take, body included; the library ends the attempt then whatever the transport
    /// does, and a transport may use it for its own timeouts too.
    ///
    /// ```swift
    /// urlRequest.timeoutInterval = request.timeout
    /// ```
    public var timeout: TimeInterval
    /// The most bytes the answer's body may have, or nil for no limit: a transport should stop reading there and
    /// throw ``ResponseTooLarge`` (a Content-Length beyond it before reading the body); the library checks what a
    /// transport returns as well.
    public var maxResponseBytes: Int?

    /// Makes a request, for a test that calls a transport directly.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, upper case (`GET`, `POST`…).
    ///   - url: the absolute URL, query included.
    ///   - headers: the headers to send, exactly as named.
    ///   - body: the body bytes; nil for none.
    ///   - timeout: how long the attempt may take in seconds, body included, 30 by default.
    ///   - maxResponseBytes: the most bytes the answer's body may have; nil for no limit.
    ///
    /// ```swift
    /// HTTPRequest(method: "GET", url: url, headers: ["Accept": "application/json"])
    /// ```
    public init(
        method: String, url: URL, headers: [String: String] = [:], body: Data? = nil, timeout: TimeInterval = 30,
        maxResponseBytes: Int? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
    }

    /// Reads a header without regard to the case of its name, since HTTP header names are case-insensitive.
    ///
    /// - Parameter name: the header's name, in any case.
    /// - Returns: the header's value, or nil when the request has none.
    ///
    /// ```swift
    /// request.header("idempotency-key")
    /// ```
    public func header(_ name: String) -> String? { HTTPHeaders.value(name, in: headers) }
}
