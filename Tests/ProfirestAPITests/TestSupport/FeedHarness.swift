import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// A stream body under test control. Every read of the reader is counted, so a test knows that a chunk was
/// fully processed when the next read comes.
final class LiveBody: @unchecked Sendable {
    // @unchecked: all state is behind `state`.
    private enum Item {
        case chunk(Data)
        case end
        case fail(Error)
    }

    private struct State {
        var queue: [Item] = []
        var waiting: CheckedContinuation<Data?, Error>?
        var reads = 0
        var closedByReader = false
        /// The reader was handed the end or an error: the connection is over, it has nothing left to close.
        var over = false
    }

    private let state = Locked(State())
    private let changes: Changes

    init(_ changes: Changes, _ chunks: [String] = [], end: Bool = false) {
        self.changes = changes
        for chunk in chunks { send(chunk) }
        if end { self.end() }
    }

    /// How many chunks the reader asked for so far.
    var reads: Int { state.withLock { $0.reads } }
    /// True when the reader gave up the connection (idle limit, stop): it was cancelled while it waited for a
    /// chunk, or it asked for one while already cancelled. Set synchronously, as `URLSessionTransport` cancels
    /// its request from the stream's `onTermination`, so it holds as soon as the reader's read has returned.
    var closedByReader: Bool { state.withLock { $0.closedByReader } }

    func send(_ text: String) { push(.chunk(Data(text.utf8))) }
    func send(_ data: Data) { push(.chunk(data)) }
    func end() { push(.end) }
    func fail(_ error: Error = URLError(.networkConnectionLost)) { push(.fail(error)) }

    private func push(_ item: Item) {
        let waiter: CheckedContinuation<Data?, Error>? = state.withLock {
            if let waiter = $0.waiting {
                $0.waiting = nil
                return waiter
            }
            $0.queue.append(item)
            return nil
        }
        if let waiter { resume(waiter, with: item) }
        changes.signal()
    }

    private func resume(_ continuation: CheckedContinuation<Data?, Error>, with item: Item) {
        if case .chunk = item {} else { state.withLock { $0.over = true } }
        switch item {
        case .chunk(let data): continuation.resume(returning: data)
        case .end: continuation.resume(returning: nil)
        case .fail(let error): continuation.resume(throwing: error)
        }
    }

    /// Hand it out once per connection: the transport keeps it, as `URLSessionTransport` keeps the stream's
    /// continuation until the request ends, so a reader that only drops its iterator has closed nothing.
    var stream: AsyncThrowingStream<Data, Error> {
        // `AsyncThrowingStream(unfolding:)` does not call `read` for a reader whose task is already cancelled (a
        // `stop()` that came while `onEvents` ran): it drops this closure and ends. Where `read`'s cancellation
        // handler never runs, the drop is the only trace of the reader closing the connection, so `release` sees
        // it go, synchronously, inside that last `next()`.
        let release = Release(self)
        return AsyncThrowingStream(unfolding: { [self, release] in
            withExtendedLifetime(release) {}
            return try await self.read()
        })
    }

    /// Calls `dropped()` when the stream lets go of its producer.
    private final class Release: Sendable {
        let body: LiveBody
        init(_ body: LiveBody) { self.body = body }
        deinit { body.dropped() }
    }

    private func dropped() {
        let closed: Bool = state.withLock { state in
            // After the end the stream drops its producer too: that closes nothing.
            guard !state.over, !state.closedByReader else { return false }
            state.closedByReader = true
            return true
        }
        if closed { changes.signal() }
    }

    private func read() async throws -> Data? {
        defer { changes.signal() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, Error>) in
                let item: Item? = state.withLock {
                    $0.reads += 1
                    if $0.closedByReader { return .end }
                    if !$0.queue.isEmpty { return $0.queue.removeFirst() }
                    $0.waiting = continuation
                    return nil
                }
                if let item { resume(continuation, with: item) }
                changes.signal()
            }
        } onCancel: {
            let waiter: CheckedContinuation<Data?, Error>? = state.withLock { state in
                state.closedByReader = true
                let waiter = state.waiting
                state.waiting = nil
                return waiter
            }
            waiter?.resume(returning: nil)
            changes.signal()
        }
    }
}

/// One scripted answer to `GET /v2/events/stream`: a `ScriptedTransport.Reply`, built as below.
typealias StreamStep = ScriptedTransport.Reply

extension ScriptedTransport.Reply {
    /// A 200 `text/event-stream` (or `contentType`) whose body the test controls.
    static func open(_ body: LiveBody, contentType: String = "text/event-stream", heartbeat: Int? = nil) -> Self {
        var headers = ["Content-Type": contentType]
        if let heartbeat { headers["Profirest-Heartbeat"] = "\(heartbeat)" }
        return .stream(HTTPStreamingResponse(status: 200, headers: headers, body: body.stream))
    }

    /// An answer read whole (an error): the step's status, headers and body.
    static func answer(_ step: Step) -> Self { step }
}

/// The feed's two endpoints scripted apart on one `ScriptedTransport`: pages for `GET /v2/events`, streams for
/// `GET /v2/events/stream`. When a script runs out the request hangs (until the reading is stopped), so a test sees
/// exactly the requests it scripted; every request and every script added wakes the test's `changes`.
struct FeedTransport {
    static let pages = "/v2/events"
    static let streams = "/v2/events/stream"

    let scripted: ScriptedTransport
    let changes: Changes

    init(_ changes: Changes, pages: [Step] = [], streams: [StreamStep] = []) {
        self.changes = changes
        scripted = ScriptedTransport([], otherwise: { _ in .hang }, willReply: { _, _ in changes.signal() })
        scripted.route("GET", Self.pages, pages)
        scripted.route("GET", Self.streams, streams)
    }

    var requests: [HTTPRequest] { scripted.requests }
    var pageRequests: [HTTPRequest] { requests.filter { $0.url.path == Self.pages } }
    var streamRequests: [HTTPRequest] { requests.filter { $0.url.path == Self.streams } }

    func addPages(_ steps: [Step]) {
        scripted.route("GET", Self.pages, steps)
        changes.signal()
    }

    func addStreams(_ steps: [StreamStep]) {
        scripted.route("GET", Self.streams, steps)
        changes.signal()
    }
}

/// What the app's handlers saw, in order: `events:<ids>`, `reset:<code>`, `error:<code or type>`.
final class FeedLog: @unchecked Sendable {
    private let entries = Locked([String]())
    let changes: Changes
    /// Errors `onEvents` throws, one per call, before it starts succeeding.
    let failures = Locked(0)
    /// Runs inside `onEvents` (e.g. to look at the stored cursor meanwhile).
    let during = Locked<(@Sendable ([Event]) -> Void)?>(nil)

    init(_ changes: Changes) { self.changes = changes }

    var all: [String] { entries.withLock { $0 } }
    var events: [String] { all.filter { $0.hasPrefix("events:") } }
    var errors: [String] { all.filter { $0.hasPrefix("error:") } }

    func record(_ entry: String) {
        entries.withLock { $0.append(entry) }
        changes.signal()
    }

    func onEvents(_ events: [Event]) throws {
        during.withLock { $0 }?(events)
        let fail = failures.withLock { count -> Bool in
            guard count > 0 else { return false }
            count -= 1
            return true
        }
        if fail {
            record("failed:" + events.map(\.id).joined(separator: ","))
            throw AppFailure()
        }
        record("events:" + events.map(\.id).joined(separator: ","))
    }

    func onError(_ error: any Error) {
        switch error {
        case let e as ProfirestAPIError: record("error:\(e.code)")
        case is AppFailure: record("error:app")
        default: record("error:\(type(of: error))")
        }
    }
}

struct AppFailure: Error {}

/// A client with a stored cursor (unless `cursor` is nil), a fixed token, virtual time, and a feed log.
struct FeedHarness {
    let api: ProfirestApi
    let transport: FeedTransport
    let clock: FeedClock
    let changes: Changes
    let log: FeedLog
    let storage: MemoryTokenStorage

    static let storageKey = "profirest-api:feed-tests"
    static let restaurantID = "11"

    init(
        cursor: String? = "c0", types: [String] = [], pages: [Step] = [], streams: [StreamStep] = [],
        streaming: Bool = true, authorizer: (any RequestAuthorizer)? = nil, retries: Int = 0,
        observer: (@Sendable (ProfirestEvent) -> Void)? = nil, random: @escaping @Sendable () -> Double = { 0.5 }
    ) {
        let changes = Changes()
        let clock = FeedClock(changes: changes)
        let transport = FeedTransport(changes, pages: pages, streams: streams)
        let storage = MemoryTokenStorage()
        if let cursor {
            let key = StoredState.cursorKey(restaurantID: Self.restaurantID, types: types)
            try! storage.set(Self.storageKey, #"{"version":1,"\#(key)":"\#(cursor)"}"#)
        }
        let timer = ManualTimer()
        api = ProfirestApi(
            options: .init(
                language: "en", storage: storage, storageKey: Self.storageKey, retries: retries, retryDelay: 1,
                transport: streaming ? transport.scripted : transport.scripted.withoutStreaming, clock: { clock.now },
                sleep: { try await clock.sleep($0) }, observer: observer),
            authorizer: authorizer ?? TestAuthorizer(token: "at_feed_secret"),
            attemptTimer: { try await timer.wait($0) }, random: random)
        self.transport = transport
        self.clock = clock
        self.changes = changes
        self.log = FeedLog(changes)
        self.storage = storage
    }

    func options(
        types: [String] = [], stream: Bool = true, streamIdleTimeout: TimeInterval = 45, interval: TimeInterval = 5,
        limit: Int = 100
    ) -> EventWatcher.Options {
        let log = self.log
        return EventWatcher.Options(
            restaurantID: Self.restaurantID, types: types, onEvents: { try log.onEvents($0) },
            onReset: { log.record("reset:\($0.code)") }, onError: { log.onError($0) }, stream: stream,
            streamIdleTimeout: streamIdleTimeout, interval: interval, limit: limit)
    }

    /// The cursor in the storage now (of the subscription without types, unless told).
    var storedCursor: String? { storedCursor(types: []) }

    func storedCursor(types: [String]) -> String? {
        let key = StoredState.cursorKey(restaurantID: Self.restaurantID, types: types)
        guard let text = try? storage.get(Self.storageKey) else { return nil }
        return (try? StoredState.decode(text, location: "test"))?.eventsCursor[key]
    }

    /// Starts `run()` in a task of its own.
    func start(_ watcher: EventWatcher) -> Task<Void, Never> {
        Task {
            await watcher.run()
            changes.signal()
        }
    }

    func until(_ what: String, file: StaticString = #filePath, line: UInt = #line, _ condition: @escaping () -> Bool) async {
        await changes.until(what, file: file, line: line, condition)
    }

    /// Waits for the `count`-th request to the page endpoint.
    func pageRequest(_ count: Int, file: StaticString = #filePath, line: UInt = #line) async -> HTTPRequest? {
        await until("page request #\(count)", file: file, line: line) { transport.pageRequests.count >= count }
        let requests = transport.pageRequests
        return requests.count >= count ? requests[count - 1] : nil
    }

    /// Waits for the `count`-th request to the stream endpoint.
    func streamRequest(_ count: Int, file: StaticString = #filePath, line: UInt = #line) async -> HTTPRequest? {
        await until("stream request #\(count)", file: file, line: line) { transport.streamRequests.count >= count }
        let requests = transport.streamRequests
        return requests.count >= count ? requests[count - 1] : nil
    }
}

// MARK: Payloads

func eventJSON(_ id: String, type: String = "order.created") -> JSONValue {
    ["id": .string(id), "type": .string(type), "restaurant_id": "11", "occurred_at": "2026-11-29T12:01:00Z",
     "data": ["order_id": "ord_1", "status": "accepted"]]
}

/// A page of `GET /v2/events`.
func page(_ ids: [String], next: String, hasMore: Bool = false) -> Step {
    .json(200, ["data": .array(ids.map { eventJSON($0) }), "next_cursor": .string(next), "has_more": .bool(hasMore)])
}

/// One SSE frame as the server writes it: `id` is the cursor after the event.
func frame(_ eventID: String, cursor: String, type: String = "order.created") -> String {
    let data = String(decoding: try! JSONCoding.encode(eventJSON(eventID, type: type)), as: UTF8.self)
    return "id: \(cursor)\nevent: \(type)\ndata: \(data)\n\n"
}

/// The query of a request as a dictionary (percent-decoded).
func query(_ request: HTTPRequest?) -> [String: String] {
    guard let request, let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems else { return [:] }
    var query: [String: String] = [:]
    for item in items { query[item.name] = item.value ?? "" }
    return query
}
