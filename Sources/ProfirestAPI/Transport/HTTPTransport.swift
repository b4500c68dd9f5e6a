import Foundation

/// Sends one HTTP request and returns the whole response. The library calls it once per attempt; retries,
/// timeouts, tokens and error decoding stay in the library, so a transport only moves bytes.
///
/// A transport must not follow redirects (return the 3xx as it is) and should stop when its task is cancelled.
/// Throw `URLError` for failures without an answer: `.timedOut` becomes the `timeout` code, anything else
/// `network_error`.
///
/// ```swift
/// let api = ProfirestApi(options: .init(transport: URLSessionTransport()))
/// ```
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the status, headers and the complete body.
    /// Usage: `let response = try await transport.send(request)`
    func send(_ request: HTTPRequest) async throws -> APIResponse
}

/// A transport that can also hand out a response body piece by piece as it arrives (Server-Sent Events).
///
/// ```swift
/// let head = try await transport.stream(request); for try await chunk in head.body { parse(chunk) }
/// ```
public protocol StreamingHTTPTransport: HTTPTransport {
    /// Sends `request` and returns as soon as the status and headers are known; `body` yields the chunks.
    /// Usage: `let streaming = try await transport.stream(request)`
    func stream(_ request: HTTPRequest) async throws -> HTTPStreamingResponse
}

/// One HTTP request as the library hands it to a transport: the URL is absolute and every header is final.
///
/// ```swift
/// let request = HTTPRequest(method: "GET", url: URL(string: "https://api.mujprofirest.cz/v2/connection")!)
/// ```
public struct HTTPRequest: Sendable, Hashable {
    /// The method, upper case. Usage: `request.method == "POST"`
    public var method: String
    /// The absolute URL. Usage: `request.url.path`
    public var url: URL
    /// The headers to send, exactly as named here. Usage: `request.headers["Idempotency-Key"]`
    public var headers: [String: String]
    /// The body, if any. Usage: `request.body?.count`
    public var body: Data?
    /// The limit of this attempt, body included. The library ends an attempt at this limit around any transport;
    /// a transport may also use it for its own timeouts. Usage: `urlRequest.timeoutInterval = request.timeout`
    public var timeout: TimeInterval

    /// Usage: `HTTPRequest(method: "GET", url: url, headers: ["Accept": "application/json"])`
    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil, timeout: TimeInterval = 30) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// The value of a header, looked up without regard to case. Usage: `request.header("idempotency-key")`
    public func header(_ name: String) -> String? { HTTPHeaders.value(name, in: headers) }
}

/// The head of a streamed response and its body as it arrives.
///
/// ```swift
/// for try await chunk in streaming.body { buffer.append(chunk) }
/// ```
public struct HTTPStreamingResponse: Sendable {
    /// The HTTP status code. Usage: `streaming.status`
    public var status: Int
    /// The headers as received. Usage: `streaming.headers["Content-Type"]`
    public var headers: [String: String]
    /// The body in the pieces the server flushed; ends when the response ends, throws when it breaks off.
    /// Usage: `for try await chunk in streaming.body { … }`
    public var body: AsyncThrowingStream<Data, Error>

    /// Usage: `HTTPStreamingResponse(status: 200, headers: [:], body: stream)`
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

/// Case-insensitive header lookup shared by requests, responses and `APIResponse`.
enum HTTPHeaders {
    static func value(_ name: String, in headers: [String: String]) -> String? {
        // The exact spelling first: it is what the library itself writes, and it avoids a scan.
        if let exact = headers[name] { return exact }
        for (key, value) in headers where key.caseInsensitiveCompare(name) == .orderedSame { return value }
        return nil
    }
}
