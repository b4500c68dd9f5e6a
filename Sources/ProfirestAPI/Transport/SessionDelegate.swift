import Foundation
#if PROFIREST_SHIMS
// The test-only target PlatformShims compiles this file against Darwin's URL Loading System and Security as declared in
// Sources/AppleShims (the Apple branches below), instead of FoundationNetworking; see Tests/PlatformShimsTests.
import AppleShims
#elseif canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The delegate of a `URLSessionTransport`'s stream session: refuses redirects, answers no authentication
/// challenge (`AuthChallenge`), and routes each streaming task's callbacks to its reader.
///
/// Delegate callbacks for streaming because Linux has no `bytes(for:)`.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: `tasks` is a `Locked`, `anchors` never changes.

    enum Sink {
        case streaming(head: CheckedContinuation<APIResponse, Error>, body: AsyncThrowingStream<Data, Error>.Continuation)
    }

    private struct Entry {
        var sink: Sink
        var head: APIResponse?
        var headDelivered = false
        /// The delegate cancelled an authentication challenge: the task's error is ours, `head` is the answer.
        var challenged = false
    }

    private let tasks = Locked([Int: Entry]())
    /// Extra certificate authorities (DER) the server's certificate may chain to.
    private let anchors: [Data]

    init(anchors: [Data]) { self.anchors = anchors }

    func register(_ task: URLSessionTask, sink: Sink) {
        tasks.withLock { $0[task.taskIdentifier] = Entry(sink: sink) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Never follow: the 3xx itself is delivered and the attempt turns it into unexpected_redirect.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let (disposition, credential, head) = AuthChallenge.answer(challenge, anchors: anchors)
        if let head {
            tasks.withLock { tasks in
                tasks[task.taskIdentifier]?.head = head
                tasks[task.taskIdentifier]?.challenged = true
            }
        }
        completionHandler(disposition, credential)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let head = Self.head(of: response)
        let resumeHead: CheckedContinuation<APIResponse, Error>? = tasks.withLock { tasks in
            guard var entry = tasks[dataTask.taskIdentifier] else { return nil }
            entry.head = head
            var waiting: CheckedContinuation<APIResponse, Error>?
            if case .streaming(let headContinuation, _) = entry.sink, !entry.headDelivered {
                entry.headDelivered = true
                waiting = headContinuation
            }
            tasks[dataTask.taskIdentifier] = entry
            return waiting
        }
        resumeHead?.resume(returning: head)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let stream: AsyncThrowingStream<Data, Error>.Continuation? = tasks.withLock { tasks in
            guard let entry = tasks[dataTask.taskIdentifier], case .streaming(_, let body) = entry.sink else { return nil }
            return body
        }
        stream?.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let entry = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        // Some responses (e.g. an empty 204 on some platforms) complete without a didReceive(response:) call.
        let head = entry.head ?? task.response.map(Self.head(of:))
        // A challenge the delegate cancelled ends the task with an error of ours: the 401 (no body) is the answer.
        let error = entry.challenged ? nil : error
        switch entry.sink {
        case .streaming(let headContinuation, let body):
            if !entry.headDelivered {
                if let error {
                    headContinuation.resume(throwing: error)
                } else if let head {
                    headContinuation.resume(returning: head)
                } else {
                    headContinuation.resume(throwing: URLError(.badServerResponse))
                }
            }
            if let error { body.finish(throwing: error) } else { body.finish() }
        }
    }

    static func head(of response: URLResponse) -> APIResponse {
        guard let http = response as? HTTPURLResponse else { return APIResponse(status: 0) }
        var headers: [String: String] = [:]
        headers.reserveCapacity(http.allHeaderFields.count)
        for (key, value) in http.allHeaderFields {
            if let name = key as? String { headers[name] = value as? String ?? "\(value)" }
        }
        return APIResponse(status: http.statusCode, headers: headers)
    }
}
