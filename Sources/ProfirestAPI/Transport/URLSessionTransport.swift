import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default transport: `URLSession` on Apple platforms and on Linux.
///
/// - Redirects are refused in the session delegate: a 3xx comes back as it is, so tokens never follow it.
/// - Cancelling the calling task cancels the `URLSessionTask`.
/// - `stream(_:)` hands out the body as the server flushes it (Linux has no `URLSession.bytes`, so this goes
///   through the data delegate on every platform).
/// - Connection reuse: see ``ConnectionReuse``. On Linux the default sends `Connection: close`, because
///   Linux URLSession mishandles a kept-alive connection that the server closes just as the next request
///   goes out (it spins until the idle timeout, or re-sends the request without its body).
///
/// ```swift
/// let transport = URLSessionTransport(connectionReuse: .keepAlive)
/// ```
public final class URLSessionTransport: StreamingHTTPTransport {
    /// Whether connections are kept open between requests.
    ///
    /// ```swift
    /// let transport = URLSessionTransport(connectionReuse: .closeAfterEachRequest)
    /// ```
    public enum ConnectionReuse: Sendable, Hashable {
        /// Reuse connections (HTTP keep-alive). The default on Apple platforms.
        case keepAlive
        /// Send `Connection: close` with every request: one new connection per request. The default on Linux.
        case closeAfterEachRequest

        /// The default of this platform. Usage: `URLSessionTransport(connectionReuse: .platformDefault)`
        public static var platformDefault: ConnectionReuse {
            #if canImport(FoundationNetworking)
            return .closeAfterEachRequest
            #else
            return .keepAlive
            #endif
        }
    }

    private let session: URLSession
    private let delegate: SessionDelegate
    private let connectionReuse: ConnectionReuse

    /// A transport over a new session of `configuration` (ephemeral by default: no cookies, no cache on disk).
    /// Usage: `let transport = URLSessionTransport()`
    public init(configuration: URLSessionConfiguration = .ephemeral, connectionReuse: ConnectionReuse = .platformDefault) {
        // The library decides about caching and cookies itself; a shared cache would also keep bodies with tokens.
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let delegate = SessionDelegate()
        let queue = OperationQueue()
        queue.name = "ProfirestAPI.URLSessionTransport"
        queue.maxConcurrentOperationCount = 1
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
        self.connectionReuse = connectionReuse
    }

    deinit {
        // The session keeps its delegate alive until invalidated; without this each transport would leak.
        session.finishTasksAndInvalidate()
    }

    /// Sends the request and collects the whole body. Usage: `let response = try await transport.send(request)`
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let task = session.dataTask(with: urlRequest(for: request))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, Error>) in
                delegate.register(task, sink: .buffered(continuation))
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// Sends the request and returns once the head is in; the body streams. Cancelling the task, or ending
    /// the iteration of `body`, cancels the request. Usage: `let streaming = try await transport.stream(request)`
    public func stream(_ request: HTTPRequest) async throws -> HTTPStreamingResponse {
        let task = session.dataTask(with: urlRequest(for: request))
        let (body, bodyContinuation) = AsyncThrowingStream<Data, Error>.makeStream()
        bodyContinuation.onTermination = { _ in task.cancel() }
        let head = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, Error>) in
                delegate.register(task, sink: .streaming(head: continuation, body: bodyContinuation))
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
        return HTTPStreamingResponse(status: head.status, headers: head.headers, body: body)
    }

    private func urlRequest(for request: HTTPRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        // Whole seconds, at least one: Linux URLSession turns a fraction below a second into an immediate
        // timeout. The library bounds the whole attempt itself, so this idle timeout only has to not end it early.
        urlRequest.timeoutInterval = max(1, request.timeout.rounded(.up))
        urlRequest.httpBody = request.body
        urlRequest.httpShouldHandleCookies = false
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if connectionReuse == .closeAfterEachRequest { urlRequest.setValue("close", forHTTPHeaderField: "Connection") }
        return urlRequest
    }
}
