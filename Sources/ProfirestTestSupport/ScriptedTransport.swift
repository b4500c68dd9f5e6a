import Foundation
import ProfirestAPI

/// An in-memory transport whose every answer the test decides: the one fake server of the tests (and of any bench
/// that wants one). Not part of the library; it uses only the library's public transport API.
///
/// It records every request it is sent, in the order they arrived, and answers each with a ``Reply``: a whole
/// response, a streamed one (fixed chunks, or a body the test drives), a thrown error, or no answer until the
/// request's task is cancelled. Where a reply comes from, first match wins:
///
/// 1. a route for the request's method and path (``route(_:_:_:otherwise:)``): its queued replies in order, then its
///    handler;
/// 2. for a request no route takes, the transport's own queue (`init(_ replies:…)`, ``enqueue(_:)``), in order;
/// 3. the `otherwise` handler; without one, the request fails with ``Unscripted``.
///
/// Recording a request and taking its queued reply happen under one lock, so the n-th request recorded on a queue is
/// the one that got its n-th reply, even when requests race.
///
/// ```swift
/// // One answer after another:
/// let transport = ScriptedTransport([.fail(URLError(.networkConnectionLost)), .respond(APIResponse(status: 204))])
/// // Or decide per request, concurrently (method + path, body, headers, a counter …):
/// let routed = ScriptedTransport { request in
///     request.url.path == "/v2/oauth/token" ? .respond(tokens) : .respond(APIResponse(status: 200, data: body))
/// }
/// let api = ProfirestApi(options: .init(accessToken: "t", transport: transport))
/// ```
///
/// Streaming: ``stream(_:)`` hands a ``Reply/stream(_:)`` or ``Reply/chunks(status:headers:chunks:thenFail:)`` body
/// out as it is, and any other response as one chunk. ``send(_:)`` reads a streamed reply whole. Every streamed body
/// handed out stays referenced by the transport for its lifetime, as `URLSessionTransport` keeps a request's stream
/// until the request ends: a reader that only drops its iterator has not closed the connection.
public final class ScriptedTransport: StreamingHTTPTransport, @unchecked Sendable {
    // @unchecked: every mutable property is behind `state`'s lock; `otherwise` and `willReply` never change.

    /// What the transport does with one request.
    public enum Reply: Sendable {
        /// Answers with this whole response.
        case respond(APIResponse)
        /// Answers with a streamed response whose body yields `chunks`, then ends — or throws `thenFail` after the
        /// last chunk (a connection that broke off). A fresh body each time the reply is used.
        case chunks(status: Int = 200, headers: [String: String] = [:], chunks: [Data], thenFail: (any Error)? = nil)
        /// Answers with this streamed response; the test drives its body (see ``live(status:headers:)``). A body
        /// can be read once: use the reply for one request.
        case stream(HTTPStreamingResponse)
        /// Throws this error from the transport, as a connection that failed without an answer (`URLError`).
        case fail(any Error)
        /// Never answers: waits until the request's task is cancelled, then throws `CancellationError`. No real time
        /// passes; whatever ends the attempt (the library's deadline, a `stop()`) has to cancel it.
        case hang

        /// A streamed `200` reply (or `status`) and the continuation that drives its body: `yield` chunks, `finish()`
        /// to end it, `finish(throwing:)` to break it off.
        ///
        /// ```swift
        /// let (reply, body) = ScriptedTransport.Reply.live(headers: ["Content-Type": "text/event-stream"])
        /// body.yield(Data("data: {}\n\n".utf8))
        /// ```
        public static func live(
            status: Int = 200, headers: [String: String] = [:]
        ) -> (reply: Reply, body: AsyncThrowingStream<Data, Error>.Continuation) {
            let (stream, continuation) = AsyncThrowingStream<Data, Error>.makeStream()
            return (.stream(HTTPStreamingResponse(status: status, headers: headers, body: stream)), continuation)
        }
    }

    /// Chooses the reply to one request; may wait (e.g. at a gate the test opens) and may throw, which fails the
    /// request like ``Reply/fail(_:)``. Called concurrently for requests in flight at once.
    public typealias Handler = @Sendable (HTTPRequest) async throws -> Reply

    /// Thrown for a request that nothing was scripted for (no route, no queued reply, no `otherwise`).
    public struct Unscripted: Error, CustomStringConvertible {
        /// The request that had no reply.
        public let request: HTTPRequest
        /// Names the request, for the test's failure message.
        public var description: String { "ScriptedTransport: no reply scripted for \(request.method) \(request.url)" }
    }

    private struct Route {
        let method: String
        let path: String
        var queue: [Reply]
        var otherwise: Handler?
    }

    private struct State {
        var requests: [HTTPRequest] = []
        var queue: [Reply]
        var routes: [Route] = []
        /// The streamed bodies handed out (see the type's comment).
        var opened: [AsyncThrowingStream<Data, Error>] = []
    }

    /// Where a request's reply comes from, decided under the lock.
    private enum Source {
        case queued(Reply)
        case handler(Handler)
        case unscripted
    }

    private let state: Locked<State>
    private let otherwise: Handler?
    private let willReply: (@Sendable (HTTPRequest, Reply) -> Void)?

    /// A transport that answers with `replies` in order, then through `otherwise`.
    ///
    /// - Parameters:
    ///   - replies: the replies for the requests no route takes, one each, in order.
    ///   - otherwise: the handler for a request nothing else answers (default: it fails with ``Unscripted``).
    ///   - willReply: called with each request and its reply just before the reply is carried out (after the
    ///     request was recorded); e.g. to wake a test that waits for a request, or to move a virtual clock when a
    ///     request hangs.
    ///
    /// ```swift
    /// let transport = ScriptedTransport([.respond(APIResponse(status: 503)), .respond(APIResponse(status: 200))])
    /// ```
    public init(
        _ replies: [Reply], otherwise: Handler? = nil, willReply: (@Sendable (HTTPRequest, Reply) -> Void)? = nil
    ) {
        state = Locked(State(queue: replies))
        self.otherwise = otherwise
        self.willReply = willReply
    }

    /// A transport that answers every request through `handler` (after any routes added later).
    ///
    /// ```swift
    /// let transport = ScriptedTransport { request in request.method == "GET" ? .respond(page) : .hang }
    /// ```
    public convenience init(_ handler: @escaping Handler) {
        self.init([], otherwise: handler)
    }

    // MARK: Scripting

    /// Adds replies to the end of the transport's own queue (for requests no route takes).
    /// Usage: `transport.enqueue([.respond(APIResponse(status: 204))])`
    public func enqueue(_ replies: [Reply]) {
        state.withLock { $0.queue += replies }
    }

    /// Answers `method` requests to `path` (the URL's path, without the query; exact match) with `replies` in order,
    /// then with `otherwise` — without one, the transport's `otherwise`. Adding a route that exists adds to its
    /// queue and, if given, replaces its handler.
    ///
    /// ```swift
    /// transport.route("GET", "/v2/events", [.respond(firstPage)], otherwise: { _ in .hang })
    /// ```
    public func route(_ method: String, _ path: String, _ replies: [Reply] = [], otherwise: Handler? = nil) {
        state.withLock { state in
            if let index = state.routes.firstIndex(where: { $0.method == method && $0.path == path }) {
                state.routes[index].queue += replies
                if let otherwise { state.routes[index].otherwise = otherwise }
            } else {
                state.routes.append(Route(method: method, path: path, queue: replies, otherwise: otherwise))
            }
        }
    }

    // MARK: What was sent

    /// Every request sent so far, in the order they arrived. Usage: `transport.requests.last?.header("Idempotency-Key")`
    public var requests: [HTTPRequest] { state.withLock { $0.requests } }

    /// The requests with this method and path (the URL's path, without the query).
    /// Usage: `transport.requests("POST", "/v2/oauth/token").count`
    public func requests(_ method: String, _ path: String) -> [HTTPRequest] {
        requests.filter { $0.method == method && $0.url.path == path }
    }

    /// How many queued replies (the transport's own and its routes') no request has taken yet.
    /// Usage: `XCTAssertEqual(transport.remaining, 0)`
    public var remaining: Int {
        state.withLock { state in state.routes.reduce(state.queue.count) { $0 + $1.queue.count } }
    }

    /// The same script behind a transport that cannot stream (only `HTTPTransport`), as a custom transport without
    /// `stream(_:)` is: the library then reads the event feed by polling. Requests are recorded here.
    /// Usage: `ProfirestApi(options: .init(transport: transport.withoutStreaming))`
    public var withoutStreaming: any HTTPTransport { SendOnly(base: self) }

    private struct SendOnly: HTTPTransport {
        let base: ScriptedTransport
        func send(_ request: HTTPRequest) async throws -> APIResponse { try await base.send(request) }
    }

    // MARK: HTTPTransport

    /// Records `request` and answers it with its reply; a streamed reply is read whole.
    public func send(_ request: HTTPRequest) async throws -> APIResponse {
        switch try await reply(to: request) {
        case .respond(let response):
            return response
        case .chunks(let status, let headers, let chunks, let failure):
            if let failure { throw failure }
            return APIResponse(status: status, headers: headers, data: chunks.reduce(Data(), +))
        case .stream(let streaming):
            keep(streaming.body)
            var data = Data()
            for try await chunk in streaming.body { data.append(chunk) }
            return APIResponse(status: streaming.status, headers: streaming.headers, data: data)
        case .fail(let error):
            throw error
        case .hang:
            try await Self.waitUntilCancelled()
        }
    }

    /// Records `request` and answers it as soon as the reply's status and headers are known; a whole response
    /// becomes a body of one chunk (none when it is empty).
    public func stream(_ request: HTTPRequest) async throws -> HTTPStreamingResponse {
        switch try await reply(to: request) {
        case .respond(let response):
            let body = Self.body([response.data].filter { !$0.isEmpty }, thenFail: nil)
            return HTTPStreamingResponse(status: response.status, headers: response.headers, body: body)
        case .chunks(let status, let headers, let chunks, let failure):
            let body = Self.body(chunks, thenFail: failure)
            keep(body)
            return HTTPStreamingResponse(status: status, headers: headers, body: body)
        case .stream(let streaming):
            keep(streaming.body)
            return streaming
        case .fail(let error):
            throw error
        case .hang:
            try await Self.waitUntilCancelled()
        }
    }

    // MARK: Inside

    /// Records the request, takes its reply (under the same lock when it is queued), and tells `willReply`.
    private func reply(to request: HTTPRequest) async throws -> Reply {
        let source: Source = state.withLock { state in
            state.requests.append(request)
            if let index = state.routes.firstIndex(where: { $0.method == request.method && $0.path == request.url.path }) {
                if !state.routes[index].queue.isEmpty { return .queued(state.routes[index].queue.removeFirst()) }
                if let handler = state.routes[index].otherwise { return .handler(handler) }
            } else if !state.queue.isEmpty {
                return .queued(state.queue.removeFirst())
            }
            return otherwise.map(Source.handler) ?? .unscripted
        }
        let reply: Reply
        switch source {
        case .queued(let queued): reply = queued
        case .handler(let handler): reply = try await handler(request)
        case .unscripted: throw Unscripted(request: request)
        }
        willReply?(request, reply)
        return reply
    }

    private func keep(_ body: AsyncThrowingStream<Data, Error>) {
        state.withLock { $0.opened.append(body) }
    }

    private static func body(_ chunks: [Data], thenFail failure: (any Error)?) -> AsyncThrowingStream<Data, Error> {
        AsyncThrowingStream { continuation in
            for chunk in chunks { continuation.yield(chunk) }
            continuation.finish(throwing: failure)
        }
    }

    /// Suspends until the calling task is cancelled (at once if it already is), then throws `CancellationError`.
    private static func waitUntilCancelled() async throws -> Never {
        // The real-time limit is only a safety net: a broken test that never cancels a hung request fails after it
        // (`HangLimitReached`) instead of hanging the whole run. Working tests cancel long before.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                let gate = CancellationGate()
                await withTaskCancellationHandler {
                    await withCheckedContinuation { gate.park($0) }
                } onCancel: {
                    gate.open()
                }
            }
            group.addTask {
                try await Task.sleep(nanoseconds: hangLimitSeconds * 1_000_000_000)
                throw HangLimitReached()
            }
            defer { group.cancelAll() }
            try await group.next()
        }
        throw CancellationError()
    }

    /// How long a `.hang` waits for its cancellation at most, in real time.
    static let hangLimitSeconds: UInt64 = 300

    /// A hung request was never cancelled: the test forgot to end it.
    public struct HangLimitReached: Error {}
}

/// A continuation parked until `open()`; an `open()` that comes first lets the park through at once.
private final class CancellationGate: @unchecked Sendable {
    // @unchecked: both properties are only touched under `lock`.
    private let lock = NSLock()
    private var isOpen = false
    private var parked: CheckedContinuation<Void, Never>?

    func park(_ continuation: CheckedContinuation<Void, Never>) {
        lock.lock()
        if isOpen {
            lock.unlock()
            continuation.resume()
        } else {
            parked = continuation
            lock.unlock()
        }
    }

    func open() {
        lock.lock()
        isOpen = true
        let waiting = parked
        parked = nil
        lock.unlock()
        waiting?.resume()
    }
}
