import Foundation

/// Moves one HTTP request and its whole response, so that an app can put its own networking (a proxy, a test
/// double) under the library; retries, timeouts, tokens and errors stay in the library.
///
/// The library calls it once per attempt.
///
/// A transport must not follow redirects (return the 3xx as it is) and should stop when its task is cancelled.
/// Throw `URLError` for failures without an answer: `.timedOut` becomes the `timeout` code, anything else
/// `network_error`.
///
/// ```swift
/// let api = ProfirestApi(options: .init(transport: URLSessionTransport()))
/// ```
public protocol HTTPTransport: Sendable {
    /// Sends `request` as it is and returns the status, headers and complete body of the answer, whatever its status.
    ///
    /// Throw `URLError` when no answer came (`.timedOut` becomes the library's `timeout`, anything else
    /// `network_error`); return a 3xx or 4xx as it is.
    ///
    /// - Parameter request: the request, complete: absolute URL, final headers, body and the attempt's `timeout`.
    /// - Returns: the answer's status, headers and whole body, whatever the status (a 3xx or 4xx too).
    /// - Throws: `URLError` when no answer came; the library reports `.timedOut` as `timeout` and any other code as
    ///   `network_error`.
    func send(_ request: HTTPRequest) async throws -> APIResponse
}

/// A transport that can also hand out a response body piece by piece as it arrives, which the event feed's live
/// stream (Server-Sent Events) needs; without it the feed polls.
///
/// ```swift
/// let head = try await transport.stream(request); for try await chunk in head.body { parse(chunk) }
/// ```
public protocol StreamingHTTPTransport: HTTPTransport {
    /// Sends `request` and returns as soon as the status and headers are known, so that the reader can start on the
    /// body while it still arrives; `body` yields the chunks as the server flushes them.
    ///
    /// - Parameter request: the request, complete: absolute URL, final headers, body and the attempt's `timeout`.
    /// - Returns: the status and headers, with the body to read as it arrives.
    /// - Throws: `URLError` when no head came, as ``HTTPTransport/send(_:)`` does.
    func stream(_ request: HTTPRequest) async throws -> HTTPStreamingResponse
}

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

/// A streamed response: its status and headers at once, and its body as it arrives, for the event feed's live
/// stream.
///
/// ```swift
/// for try await chunk in streaming.body { buffer.append(chunk) }
/// ```
public struct HTTPStreamingResponse: Sendable {
    /// The HTTP status of the answer, which tells a stream (200) from a refusal.
    public var status: Int
    /// The headers as received, among them the `Content-Type` that tells an event stream from an error page.
    public var headers: [String: String]
    /// The body in the pieces the server flushed; it ends when the response ends and throws when it breaks off.
    public var body: AsyncThrowingStream<Data, Error>

    /// Makes a streamed response, for a transport of your own or a test double of the live stream.
    ///
    /// - Parameters:
    ///   - status: the HTTP status of the answer.
    ///   - headers: the headers as received.
    ///   - body: the body's pieces as they arrive; it ends with the response and throws when it breaks off.
    ///
    /// ```swift
    /// HTTPStreamingResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: chunks)
    /// ```
    public init(status: Int, headers: [String: String], body: AsyncThrowingStream<Data, Error>) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

extension AsyncThrowingStream where Element == Data, Failure == Error {
    /// Ends the connection behind a body its reader is done with, however the reading ended. Dropping the iterator
    /// does not: the transport still holds the stream's continuation (`URLSessionTransport` until the request
    /// ends), so the request would run on and its chunks pile up unread. A read by a cancelled task is what ends
    /// an `AsyncThrowingStream` from the reading side: it runs `onTermination`, which cancels the request. Call it
    /// only when no other read of the body is under way.
    func close() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var iterator = self.makeAsyncIterator()
                // Until the end: a read that started before the cancellation may still be handed a buffered chunk.
                while (try? await iterator.next()) != nil {}
            }
            group.cancelAll()
        }
    }
}

/// A transport that ends each exchange by `HTTPRequest.timeout` itself, counting the whole exchange (not idle
/// time), and then throws `URLError(.timedOut)`: the library then calls it without racing a timer of its own.
protocol BoundsEachAttempt {}

/// Case-insensitive header lookup shared by requests, responses and `APIResponse`.
enum HTTPHeaders {
    static func value(_ name: String, in headers: [String: String]) -> String? {
        // The exact spelling first: it is what the library itself writes, and it avoids a scan.
        if let exact = headers[name] { return exact }
        for (key, value) in headers where key.caseInsensitiveCompare(name) == .orderedSame { return value }
        return nil
    }
}

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
