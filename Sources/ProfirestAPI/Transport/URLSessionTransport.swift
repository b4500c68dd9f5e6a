import Foundation
#if PROFIREST_SHIMS
// The test-only target PlatformShims compiles this file against Darwin's URL Loading System and Security as declared in
// Sources/AppleShims (the Apple branches below), instead of FoundationNetworking; see Tests/PlatformShimsTests.
import AppleShims
#elseif canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transport a client uses on Apple platforms unless given another: `URLSession`, hardened for the API; on Linux
/// it is still there (the default there is ``CurlTransport``, or this one when libcurl cannot be used).
///
/// - Redirects are refused in the session delegate: a 3xx comes back as it is, so tokens never follow it. Every task is
///   one whose delegate Apple documents to be asked (no completion-handler tasks; see `send(_:)`).
/// - An answer's body is collected as it arrives and the task cancelled once it passes the request's
///   `maxResponseBytes` (``ResponseTooLarge``), so a long answer is never held whole.
/// - An authentication challenge (a 401 with `WWW-Authenticate: Basic`) is never answered: the 401 comes back at
///   once, on Linux without its body (see `AuthChallenge`).
/// - Cancelling the calling task cancels the `URLSessionTask`.
/// - Each exchange ends at `HTTPRequest.timeout`, body included (`DeadlineSweeper` cancels the task).
/// - `stream(_:)` hands out the body as the server flushes it (Linux has no `URLSession.bytes`, so this goes
///   through the data delegate on every platform).
/// - On Linux a request with a body always goes out on a connection of its own, and a kept connection is reused for
///   a read only within 1 s of the last one (see `ConnectionPolicy`); ``CurlTransport`` has neither limit.
///
/// ```swift
/// let transport = URLSessionTransport()
/// ```
public final class URLSessionTransport: StreamingHTTPTransport, BoundsEachAttempt {
    /// Chooses whether connections are kept open between requests without a body, a knob for Linux URLSession's
    /// trouble with connections a server closes.
    @available(
        *, deprecated,
        message: "use URLSessionTransport(configuration:); on Linux the default transport is CurlTransport (libcurl)"
    )
    public enum ConnectionReuse: Sendable, Hashable {
        /// Reuses connections as URLSession does (HTTP keep-alive).
        case keepAlive
        /// Reuses connections only between requests less than `maxIdle` seconds apart.
        case keepAliveWhileBusy(maxIdle: TimeInterval)
        /// Sends `Connection: close` with every request, one new connection each.
        case closeAfterEachRequest

        /// The choice for the platform this runs on: `.keepAlive` on Apple platforms, `.keepAliveWhileBusy(maxIdle: 1)`
        /// on Linux.
        public static var platformDefault: ConnectionReuse {
            #if canImport(FoundationNetworking) && !PROFIREST_SHIMS
            return .keepAliveWhileBusy(maxIdle: 1)
            #else
            return .keepAlive
            #endif
        }

        /// The same choice as the transport keeps it.
        var policy: URLSessionTransport.ConnectionPolicy {
            switch self {
            case .keepAlive: return .keepAlive
            case .keepAliveWhileBusy(let maxIdle): return .keepAliveWhileBusy(maxIdle: maxIdle)
            case .closeAfterEachRequest: return .closeAfterEachRequest
            }
        }
    }

    /// Chooses whether connections are kept open between requests without a body, the trade between speed and
    /// Linux URLSession's trouble with connections a server closes.
    ///
    /// Linux URLSession (libcurl underneath) mishandles a kept-alive connection that the server or a proxy closes
    /// while a request is on its way: when the connection dies before any answer, libcurl sends the request again
    /// on a new connection, and URLSession cannot rewind a body it holds as `Data`, so the request goes out again
    /// with its headers (Content-Length and Idempotency-Key included) and **no body**; the server waits for the
    /// body and the task spins until its timeout. For a body held as `Data`, answering
    /// `urlSession(_:task:needNewBodyStream:)` does not help: FoundationNetworking then traps in `seekInputStream`
    /// (checked with Swift 6.3.1; a body given as `httpBodyStream` without a Content-Length can be re-supplied, but
    /// then goes chunked, which some gateways refuse with 411 — not used here: ``CurlTransport`` keeps write
    /// connections on Linux instead). This is not rare: it
    /// follows most dropped keep-alive connections. So on Linux every request with a body (JSON, form, binary)
    /// goes through a session of its own with `Connection: close`: it always opens a new connection, there is
    /// nothing libcurl could re-send, and a lost answer surfaces as an error the library retries with the same
    /// body and Idempotency-Key. That costs a TCP (and TLS) handshake per write; reads follow the policy below.
    ///
    /// For requests without a body, servers close idle connections after their keep-alive timeout, so on Linux the
    /// default reuses a connection only for a request that follows the previous one within `maxIdle`, and starts a
    /// fresh connection pool otherwise. A re-sent GET is harmless; what is left of the race is bounded by the
    /// attempt timeout and retried.
    ///
    @_spi(TransportTuning)
    public enum ConnectionPolicy: Sendable, Hashable {
        /// Reuses connections as URLSession does (HTTP keep-alive): the fastest, and the default on Apple platforms.
        case keepAlive
        /// Reuses connections only between requests less than `maxIdle` seconds apart, so that a connection the
        /// server may have closed meanwhile is not used; the default on Linux (`maxIdle` 1 s).
        case keepAliveWhileBusy(maxIdle: TimeInterval)
        /// Sends `Connection: close` with every request, one new connection each: the safest, and about twice as
        /// slow on loopback.
        case closeAfterEachRequest

        /// The choice for the platform this runs on: `.keepAlive` on Apple platforms, `.keepAliveWhileBusy(maxIdle: 1)`
        /// on Linux.
        public static var platformDefault: ConnectionPolicy {
            #if canImport(FoundationNetworking) && !PROFIREST_SHIMS
            return .keepAliveWhileBusy(maxIdle: 1)
            #else
            return .keepAlive
            #endif
        }
    }

    private let configuration: URLSessionConfiguration
    private let connectionReuse: ConnectionPolicy
    /// Whole-body requests without a body: a session whose delegate collects each answer as it arrives (stopping at
    /// the request's `maxResponseBytes`) and refuses redirects and challenges. Replaced after an idle pause.
    private let pool: Locked<Pool>
    /// Requests with a body, on Linux only: each with `Connection: close`, so this session never holds a
    /// connection a later write could be re-sent on without its body (see `ConnectionPolicy`).
    private let writeSession: URLSession?
    /// The delegate of the whole-body sessions.
    private let sendDelegate: SendSessionDelegate
    /// Streams: a session whose delegate hands chunks to their readers. A stream holds its connection for
    /// minutes, so reuse gains nothing: on Linux streams always go with `Connection: close`.
    private let streamSession: URLSession
    private let delegate: SessionDelegate

    private struct Pool {
        var session: URLSession
        var inFlight = 0
        var lastActivity = DispatchTime.now().uptimeNanoseconds
        var generation = 0
    }

    /// Makes a transport over new sessions of `configuration` (ephemeral by default: no cookies, no cache on disk,
    /// since responses carry tokens), to share between clients.
    ///
    /// - Parameter configuration: the sessions' configuration, ephemeral by default.
    ///
    /// ```swift
    /// let transport = URLSessionTransport()
    /// let api = ProfirestApi(options: .init(clientID: "muj-eshop", transport: transport))
    /// ```
    public convenience init(configuration: URLSessionConfiguration = .ephemeral) {
        self.init(configuration: configuration, policy: .platformDefault)
    }

    /// Makes a transport that reuses connections as `connectionReuse` says.
    ///
    /// - Parameters:
    ///   - configuration: the sessions' configuration, ephemeral by default.
    ///   - connectionReuse: whether connections are kept between requests.
    @available(
        *, deprecated,
        message: "use URLSessionTransport(configuration:); on Linux the default transport is CurlTransport (libcurl)"
    )
    public convenience init(configuration: URLSessionConfiguration = .ephemeral, connectionReuse: ConnectionReuse) {
        self.init(configuration: configuration, policy: connectionReuse.policy)
    }

    /// Makes a transport with a connection policy other than the platform's, to compare the policies (the bench).
    @_spi(TransportTuning)
    public convenience init(configuration: URLSessionConfiguration = .ephemeral, policy: ConnectionPolicy) {
        self.init(configuration: configuration, connectionReuse: policy, anchors: [])
    }

    #if !canImport(FoundationNetworking) || PROFIREST_SHIMS
    /// Makes a transport that trusts `trustedCertificates` besides the system's certificate authorities (the server's
    /// trust is evaluated against both). Apple platforms only: Linux URLSession has no trust setting, so there use
    /// ``CurlTransport``, the default, or the system store.
    ///
    /// - Parameters:
    ///   - configuration: the sessions' configuration, ephemeral by default.
    ///   - trustedCertificates: certificate authorities to trust besides the system's.
    /// - Throws: ``ProfirestUsageError`` when the certificates cannot be read.
    ///
    /// ```swift
    /// let transport = try URLSessionTransport(trustedCertificates: .pemFile("ca.pem"))
    /// ```
    public convenience init(
        configuration: URLSessionConfiguration = .ephemeral, trustedCertificates: TrustedCertificates
    ) throws {
        let anchors = try trustedCertificates.load().certificates
        self.init(configuration: configuration, connectionReuse: .platformDefault, anchors: anchors)
    }
    #endif

    /// A transport trusting `trustedCertificates` where URLSession can (Apple platforms), for the default transport's
    /// fallback; on Linux the error that says where to go instead, once the certificates were read.
    static func trusting(_ trustedCertificates: TrustedCertificates) throws -> URLSessionTransport {
        #if canImport(FoundationNetworking) && !PROFIREST_SHIMS
        _ = try trustedCertificates.load()
        throw ProfirestUsageError(
            "URLSessionTransport cannot trust extra certificates on Linux (FoundationNetworking has no trust setting): "
                + "use CurlTransport(trustedCertificates:), the default there, or add the CA to the system store "
                + "(update-ca-certificates)")
        #else
        return try URLSessionTransport(trustedCertificates: trustedCertificates)
        #endif
    }

    private init(configuration: URLSessionConfiguration, connectionReuse: ConnectionPolicy, anchors: [Data]) {
        // The library decides about caching and cookies itself; a shared cache would also keep bodies with tokens.
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        // Credentials are the library's own (tokens, client_secret_basic): nothing is answered from a store.
        configuration.urlCredentialStorage = nil
        let delegate = SessionDelegate(anchors: anchors)
        let sendDelegate = SendSessionDelegate(anchors: anchors)
        self.sendDelegate = sendDelegate
        let queue = OperationQueue()
        queue.name = "ProfirestAPI.URLSessionTransport.streams"
        queue.maxConcurrentOperationCount = 1
        self.configuration = configuration
        self.connectionReuse = connectionReuse
        self.delegate = delegate
        self.streamSession = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
        #if canImport(FoundationNetworking) && !PROFIREST_SHIMS
        self.writeSession = Self.sendSession(configuration, sendDelegate)
        #else
        self.writeSession = nil
        #endif
        self.pool = Locked(Pool(session: Self.sendSession(configuration, sendDelegate)))
    }

    /// A whole-body session: on Linux its completion handlers run inline (`InlineDelegateQueue`).
    private static func sendSession(_ configuration: URLSessionConfiguration, _ delegate: SendSessionDelegate) -> URLSession {
        #if canImport(FoundationNetworking) && !PROFIREST_SHIMS
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: InlineDelegateQueue())
        #else
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        #endif
    }

    deinit {
        // A session keeps its delegate alive until invalidated; without this each transport would leak.
        streamSession.finishTasksAndInvalidate()
        writeSession?.finishTasksAndInvalidate()
        pool.withLock { $0.session }.finishTasksAndInvalidate()
    }

    /// How many fresh connection pools the idle rule has started (for tests and diagnostics).
    var poolGeneration: Int { pool.withLock { $0.generation } }

    /// Sends the request and collects the whole body within `request.timeout` for the whole exchange (then it
    /// throws `URLError(.timedOut)`), refusing redirects and authentication challenges so that no token follows them.
    ///
    /// - Parameter request: the request, complete: absolute URL, final headers, body and the attempt's `timeout`.
    /// - Returns: the answer's status, headers and whole body, whatever the status (a 3xx or 4xx too).
    /// - Throws: `URLError` when no answer came: `.timedOut` once `request.timeout` has passed, or the session's error
    ///   (`.cancelled` when the task is cancelled); ``ResponseTooLarge`` once the body passes
    ///   `request.maxResponseBytes` (the rest is not read).
    public func send(_ request: HTTPRequest) async throws -> APIResponse {
        let writeSession = request.body == nil ? nil : self.writeSession
        let session = writeSession ?? checkOut()
        defer { if writeSession == nil { checkIn() } }
        let close = writeSession != nil || closesConnections
        // The task (once made) and whether the deadline fired, under one lock.
        let state = Locked<(task: URLSessionDataTask?, expired: Bool)>((nil, false))
        let delegate = sendDelegate
        return try await withTaskCancellationHandler {
            do {
                return try await withCheckedThrowingContinuation { continuation in
                    // The whole-exchange deadline (URLRequest.timeoutInterval is only an idle timeout). The shared
                    // sweeper costs far less per request than racing a sleeping task (see AttemptDeadline).
                    let deadline = DeadlineSweeper.shared.add(after: request.timeout) {
                        state.withLock { state -> URLSessionDataTask? in
                            state.expired = true
                            return state.task
                        }?.cancel()
                    }
                    // A task without a completion handler, whose delegate Apple documents to be asked. Its pages:
                    // URLSessionTaskDelegate — "If you add tasks to the session with methods like dataTask(with:) …,
                    // then you implement this protocol's methods in a delegate you set on the session", redirects
                    // (`urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)`) among them;
                    // URLSessionDataTask — the session hands a data task's bytes to the delegate's
                    // `urlSession(_:dataTask:didReceive:)` as they arrive; `dataTask(with:completionHandler:)` —
                    // with a completion handler the task is not the same (only "if you pass nil" is it
                    // "equivalent to the dataTask(with:) method"), and for it the URL Loading System promises the
                    // delegate's authentication challenges only, not its redirects.
                    // https://developer.apple.com/documentation/foundation/urlsessiontaskdelegate
                    // https://developer.apple.com/documentation/foundation/urlsessiondatatask
                    // https://developer.apple.com/documentation/foundation/urlsession/datatask(with:completionhandler:)-e6xv
                    let task = session.dataTask(with: urlRequest(for: request, close: close))
                    delegate.register(task, limit: request.maxResponseBytes) { outcome in
                        DeadlineSweeper.shared.remove(deadline)
                        continuation.resume(with: outcome)
                    }
                    state.withLock { $0.task = task }
                    task.resume()
                    // Cancelled before `state` held the task: the cancellation handler found nothing to cancel.
                    if Task.isCancelled { task.cancel() }
                }
            } catch {
                if state.withLock({ $0.expired }) { throw URLError(.timedOut) }
                throw Self.undecodableBody(error) ?? error
            }
        } onCancel: {
            // Never wait for the session here. This handler runs under the task's status lock, and
            // `URLSessionTask.cancel()` waits for the session's work queue — where, on Linux, the delegate may at
            // that moment be resuming this task's continuation, which needs the same lock: both would wait for ever
            // (seen with `URLSession.data(for:)`, which cancels that way; see BENCHMARKS.md).
            if let task = state.withLock({ $0.task }) {
                DispatchQueue.global().async { task.cancel() }
            }
        }
    }

    /// Sends the request and returns once the head is in, with the body streaming as the server flushes it, for the
    /// event feed's live stream.
    ///
    /// Cancelling the task, or ending the iteration of `body`, cancels the request. `request.timeout` bounds the wait
    /// for the head only.
    ///
    /// - Parameter request: the request, complete: absolute URL, final headers, body and the attempt's `timeout`.
    /// - Returns: the status and headers, with the body to read as it arrives.
    /// - Throws: `URLError` when no head came: `.timedOut` once `request.timeout` has passed, or the session's error.
    public func stream(_ request: HTTPRequest) async throws -> HTTPStreamingResponse {
        let close: Bool
        #if canImport(FoundationNetworking) && !PROFIREST_SHIMS
        close = connectionReuse != .keepAlive || request.body != nil
        #else
        close = closesConnections
        #endif
        let task = streamSession.dataTask(with: urlRequest(for: request, close: close))
        let (body, bodyContinuation) = AsyncThrowingStream<Data, Error>.makeStream()
        bodyContinuation.onTermination = { _ in task.cancel() }
        let head = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<APIResponse, Error>) in
                delegate.register(task, sink: .streaming(head: continuation, body: bodyContinuation))
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
        return HTTPStreamingResponse(status: head.status, headers: head.headers, body: body)
    }

    /// A body that is not what its Content-Encoding says, as the libcurl transport reports it (`invalid_response`,
    /// which no retry mends), rather than a network failure: URLSession says `.cannotDecodeContentData` on Apple
    /// platforms, and on Linux an unknown error with libcurl's message for CURLE_BAD_CONTENT_ENCODING.
    static func undecodableBody(_ error: Error) -> URLError? {
        guard let urlError = error as? URLError else { return nil }
        let message = urlError.userInfo[NSLocalizedDescriptionKey] as? String ?? ""
        let undecodable = urlError.code == .cannotDecodeContentData || urlError.code == .cannotDecodeRawData
            || (urlError.code == .unknown && message.hasPrefix("Error while processing content unencoding"))
        guard undecodable else { return nil }
        let reason = "the body could not be decoded from its Content-Encoding (\(message.isEmpty ? "\(urlError.code.rawValue)" : message))"
        return URLError(.cannotParseResponse, userInfo: [NSLocalizedDescriptionKey: reason])
    }

    private var closesConnections: Bool { connectionReuse == .closeAfterEachRequest }

    /// The session for the next request; after an idle pause longer than `maxIdle` a new one (new connections).
    private func checkOut() -> URLSession {
        let (session, retired): (URLSession, URLSession?) = pool.withLock { pool in
            var retired: URLSession?
            if case .keepAliveWhileBusy(let maxIdle) = connectionReuse, pool.inFlight == 0 {
                let idle = Double(DispatchTime.now().uptimeNanoseconds - pool.lastActivity) / 1e9
                if idle > maxIdle {
                    retired = pool.session
                    pool.session = Self.sendSession(configuration, sendDelegate)
                    pool.generation += 1
                }
            }
            pool.inFlight += 1
            return (pool.session, retired)
        }
        retired?.finishTasksAndInvalidate()
        return session
    }

    private func checkIn() {
        pool.withLock {
            $0.inFlight -= 1
            $0.lastActivity = DispatchTime.now().uptimeNanoseconds
        }
    }

    private func urlRequest(for request: HTTPRequest, close: Bool) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        // Whole seconds, at least one: Linux URLSession turns a fraction below a second into an immediate
        // timeout. The exchange is bounded by `DeadlineSweeper`, so this idle timeout only has to not end it early.
        urlRequest.timeoutInterval = max(1, request.timeout.rounded(.up))
        urlRequest.httpBody = request.body
        urlRequest.httpShouldHandleCookies = false
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        #if canImport(FoundationNetworking) && !PROFIREST_SHIMS
        // Linux URLSession adds an Accept-Language from the process locale to a request that has none, so
        // `language: nil` would still ask the server for some language. A value of one space stops that: URLSession
        // sees the header present and adds nothing, and libcurl reads a header with nothing but blanks after the
        // colon as "send no such header". An empty value would not do: it goes out as `Accept-Language:` with an
        // empty value (both checked against an echo server, Swift 6.3.1).
        if request.header("Accept-Language") == nil { urlRequest.setValue(" ", forHTTPHeaderField: "Accept-Language") }
        #endif
        if close { urlRequest.setValue("close", forHTTPHeaderField: "Connection") }
        return urlRequest
    }
}

/// The delegate of the whole-body sessions: collects each task's answer as its bytes arrive, stopping at the request's
/// `maxResponseBytes`, refuses every redirect and answers no authentication challenge (`AuthChallenge`).
///
/// On Linux its calls run inline on the session's work queue (`InlineDelegateQueue`): whatever may cancel the task
/// from there (a refused challenge, a body over the cap) is done from another thread, since cancelling waits for
/// that queue.
final class SendSessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: `exchanges` is a `Locked`, `anchors` never changes.
    /// Extra certificate authorities (DER) the server's certificate may chain to.
    let anchors: [Data]

    /// One task's answer as it comes in.
    private struct Exchange {
        let finish: @Sendable (Result<APIResponse, Error>) -> Void
        let limit: Int?
        var answer: APIResponse?
        /// The delegate cancelled an authentication challenge: the task's error is ours, `answer` (no body) is it.
        var challenged = false
        /// The body passed the cap: the task was cancelled and the bytes dropped.
        var tooLarge = false
    }

    /// By task: the transport's sessions share this delegate, and a task identifier is unique in its session only.
    private let exchanges = Locked([ObjectIdentifier: Exchange]())

    init(anchors: [Data]) { self.anchors = anchors }

    /// Collects `task`'s answer for `finish`, called once when the task completes (before it is resumed).
    func register(
        _ task: URLSessionDataTask, limit: Int?, finish: @escaping @Sendable (Result<APIResponse, Error>) -> Void
    ) {
        exchanges.withLock { $0[ObjectIdentifier(task)] = Exchange(finish: finish, limit: limit) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Never follow: the 3xx itself is the answer, and the attempt turns it into unexpected_redirect.
        DispatchQueue.global().async { completionHandler(nil) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let (disposition, credential, head) = AuthChallenge.answer(challenge, anchors: anchors)
        if let head {
            exchanges.withLock { exchanges in
                exchanges[ObjectIdentifier(task)]?.answer = head
                exchanges[ObjectIdentifier(task)]?.challenged = true
            }
        }
        // Cancelling the challenge cancels the task (see the type's discussion).
        DispatchQueue.global().async { completionHandler(disposition, credential) }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let head = SessionDelegate.head(of: response)
        // A declared length over the cap ends the task before any byte of the body is kept.
        let declared = response.expectedContentLength >= 0
            ? response.expectedContentLength : head.header("Content-Length").flatMap { Int64($0) } ?? -1
        let tooLarge: Bool = exchanges.withLock { exchanges in
            guard var exchange = exchanges[ObjectIdentifier(dataTask)] else { return false }
            exchange.answer = head
            if let limit = exchange.limit, declared > Int64(limit) { exchange.tooLarge = true }
            exchanges[ObjectIdentifier(dataTask)] = exchange
            return exchange.tooLarge
        }
        completionHandler(.allow)
        // Cancelled as a body over the cap is: `.cancel` "is the same as" cancel(), but answered so, Linux URLSession
        // left the test's task waiting for its timeout.
        if tooLarge { DispatchQueue.global().async { dataTask.cancel() } }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overflowed: Bool = exchanges.withLock { exchanges in
            guard var exchange = exchanges[ObjectIdentifier(dataTask)], !exchange.tooLarge else { return false }
            exchanges[ObjectIdentifier(dataTask)] = nil  // no second copy of the body while it grows
            exchange.answer?.data.append(data)
            if let limit = exchange.limit, (exchange.answer?.data.count ?? 0) > limit {
                exchange.tooLarge = true
                exchange.answer?.data = Data()
            }
            exchanges[ObjectIdentifier(dataTask)] = exchange
            return exchange.tooLarge
        }
        if overflowed { DispatchQueue.global().async { dataTask.cancel() } }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let exchange = exchanges.withLock({ $0.removeValue(forKey: ObjectIdentifier(task)) }) else { return }
        if exchange.tooLarge {
            exchange.finish(.failure(ResponseTooLarge(limit: exchange.limit ?? 0)))
        } else if exchange.challenged, let head = exchange.answer {
            // The delegate cancelled the challenge, not the caller: the 401 (without its body) is the answer.
            exchange.finish(.success(head))
        } else if let error {
            exchange.finish(.failure(error))
        } else if let answer = exchange.answer ?? task.response.map(SessionDelegate.head(of:)) {
            // Some answers (an empty 204 on some platforms) complete without a didReceive(response:) call.
            exchange.finish(.success(answer))
        } else {
            exchange.finish(.failure(URLError(.badServerResponse)))
        }
    }
}
