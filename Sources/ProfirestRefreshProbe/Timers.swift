// `ProfirestRefreshProbe timers`: whether the event feed's timers end with what they time. See `timers()`.
import Foundation
import ProfirestAPI
#if canImport(Glibc)
import Glibc
#endif

/// An in-memory server of the event feed alone, so that nothing but the library runs in the process: `GET /v2/events`
/// answers an empty page whose cursor starts the reading, `GET /v2/events/stream` a stream that brings one event at
/// once (with `retry: 0`, so that a reconnection does not wait) and then stays open, or ends when `closeStreams` is
/// set (a connection that drops: the watcher reconnects at once).
final class FeedOnlyServer: StreamingHTTPTransport, @unchecked Sendable {
    // @unchecked: every member below `lock` is touched only while it is held.
    private let lock = NSLock()
    private var open: [Int: AsyncThrowingStream<Data, Error>.Continuation] = [:]
    private var opened = 0
    private var events = 0
    private var closing = false
    private var onOpened: (@Sendable (Int) -> Void)?

    /// Whether each new stream ends right after its event.
    var closeStreams: Bool {
        get { lock.withLock { closing } }
        set { lock.withLock { closing = newValue } }
    }

    /// Streams opened so far.
    var streamsOpened: Int { lock.withLock { opened } }
    /// Streams open now (their reader has not closed them).
    var streamsOpen: Int { lock.withLock { open.count } }

    /// Called with the count of streams opened so far, after each opening.
    func whenOpened(_ call: (@Sendable (Int) -> Void)?) { lock.withLock { onOpened = call } }

    func send(_ request: HTTPRequest) async throws -> APIResponse {
        guard request.method == "GET", request.url.path == "/v2/events" else { return APIResponse(status: 404) }
        let page = #"{"data": [], "next_cursor": "c0", "has_more": false}"#
        return APIResponse(status: 200, headers: ["Content-Type": "application/json"], data: Data(page.utf8))
    }

    func stream(_ request: HTTPRequest) async throws -> HTTPStreamingResponse {
        guard request.method == "GET", request.url.path == "/v2/events/stream" else {
            return HTTPStreamingResponse(status: 404, headers: [:], body: AsyncThrowingStream { $0.finish() })
        }
        let (body, continuation) = AsyncThrowingStream<Data, Error>.makeStream()
        let (id, event, close, call) = lock.withLock { () -> (Int, Int, Bool, (@Sendable (Int) -> Void)?) in
            opened += 1
            events += 1
            if !closing { open[opened] = continuation }
            return (opened, events, closing, onOpened)
        }
        let json = #"{"id":"evt_\#(event)","type":"order.created","restaurant_id":"11","#
            + #""occurred_at":"2026-01-01T12:00:00Z","data":{"order_id":"ord_\#(event)"}}"#
        continuation.yield(Data("retry: 0\n: open\n\nid: c\(event)\nevent: order.created\ndata: \(json)\n\n".utf8))
        if close {
            continuation.finish()
        } else {
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                self.lock.withLock { _ = self.open.removeValue(forKey: id) }
            }
        }
        call?(id)
        return HTTPStreamingResponse(
            status: 200, headers: ["Content-Type": "text/event-stream", "Profirest-Heartbeat": "15"], body: body)
    }
}

/// What /proc says about this process (Linux): resident memory (VmRSS, KB), open descriptors, threads.
enum ProcSelf {
    /// What is still allocated: malloc first gives back the free memory it keeps (glibc's `malloc_trim`), which
    /// otherwise varies by a megabyte or two with how the threads happened to share its arenas.
    static var residentKB: Int {
        #if canImport(Glibc)
        // Not in Swift's Glibc module: looked up by name.
        if let trim = dlsym(nil, "malloc_trim") {
            _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
        }
        #endif
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
        }
        return -1
    }

    static var descriptors: Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count ?? -1 }
    static var threads: Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count ?? -1 }
}

/// A client of the in-memory feed, paired already, on real time (the library's own sleep and clock: what is measured).
func feedClient(_ server: FeedOnlyServer) -> ProfirestApi {
    let storage = MemoryTokenStorage()
    let expires = ISO8601DateFormatter().string(from: Date().addingTimeInterval(86_400))
    let document = #"{"version": 1, "access_token": "at_probe", "refresh_token": "rt_probe", "#
        + #""expires_at": "\#(expires)", "token_type": "Bearer", "scopes": ["events:read"], "#
        + #""restaurant_id": "11", "device_id": "dev_probe"}"#
    try? storage.set("profirest-api:probe", document)
    return ProfirestApi(options: .init(
        baseURL: "https://api.mujprofirest.cz", clientID: "probe", storage: storage, transport: server))
}

/// Starts `count` watchers, `concurrently` at a time; each is cancelled once its first event has been handed over.
func watchOnce(_ api: ProfirestApi, count: Int, concurrently: Int) async {
    var started = 0
    while started < count {
        let batch = min(concurrently, count - started)
        started += batch
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<batch {
                group.addTask {
                    let (arrived, arrival) = AsyncStream<Void>.makeStream()
                    let watcher = api.eventWatcher(.init(onEvents: { _ in arrival.yield() }))
                    let reading = Task { await watcher.run() }
                    var first = arrived.makeAsyncIterator()
                    _ = await first.next()
                    reading.cancel()
                    await reading.value
                }
            }
        }
    }
}

/// One watcher whose streams each end after their event, until `count` more streams were opened.
func reconnect(_ api: ProfirestApi, _ server: FeedOnlyServer, count: Int) async {
    server.closeStreams = true
    let target = server.streamsOpened + count
    let (reached, reach) = AsyncStream<Void>.makeStream()
    server.whenOpened { opened in if opened >= target { reach.yield() } }
    let watcher = api.eventWatcher(.init(onEvents: { _ in }))
    let reading = Task { await watcher.run() }
    var signal = reached.makeAsyncIterator()
    _ = await signal.next()
    reading.cancel()
    await reading.value
    server.whenOpened(nil)
    server.closeStreams = false
}

/// `ProfirestRefreshProbe timers [--watchers N] [--reconnects N] [--warmup N]`: after a warm-up (N watchers, 2000,
/// and N/2 reconnections), starts N watchers, 100 at a time, each cancelled after its one event, then has one watcher
/// reconnect N times, all against `FeedOnlyServer`; prints one JSON line with the resident memory before and after
/// each (KB, after `malloc_trim`; the growth is what outlived the watchers, such as timers kept until their
/// deadline) and the descriptors and threads after the warm-up and at the end (threads: the lowest seen within 8 s,
/// as idle worker threads leave).
func timers() async {
    let watchers = Int(argument("watchers", "10000")) ?? 10_000
    let reconnects = Int(argument("reconnects", "5000")) ?? 5_000
    let warmup = Int(argument("warmup", "2000")) ?? 2_000
    let server = FeedOnlyServer()
    let api = feedClient(server)
    let start = Date()
    await watchOnce(api, count: warmup, concurrently: 100)
    await reconnect(api, server, count: warmup / 2)
    let (descriptorsBefore, threadsBefore) = (ProcSelf.descriptors, ProcSelf.threads)
    let watchersBefore = ProcSelf.residentKB
    let watchersStart = Date()
    await watchOnce(api, count: watchers, concurrently: 100)
    let watchersAfter = ProcSelf.residentKB
    let watchersSeconds = Date().timeIntervalSince(watchersStart)
    let reconnectsStart = Date()
    await reconnect(api, server, count: reconnects)
    let reconnectsAfter = ProcSelf.residentKB
    let reconnectsSeconds = Date().timeIntervalSince(reconnectsStart)
    var threadsAfter = ProcSelf.threads
    let settle = Date().addingTimeInterval(8)
    while threadsAfter > threadsBefore && Date() < settle {
        try? await Task.sleep(nanoseconds: 100_000_000)
        threadsAfter = min(threadsAfter, ProcSelf.threads)
    }
    emit([
        "watchers": watchers, "reconnects": reconnects, "warmup": warmup,
        "watchers_rss_before_kb": watchersBefore, "watchers_rss_after_kb": watchersAfter,
        "reconnects_rss_after_kb": reconnectsAfter,
        "watchers_seconds": (watchersSeconds * 100).rounded() / 100,
        "reconnects_seconds": (reconnectsSeconds * 100).rounded() / 100,
        "streams_opened": server.streamsOpened, "streams_open": server.streamsOpen,
        "descriptors_before": descriptorsBefore, "descriptors_after": ProcSelf.descriptors,
        "threads_before": threadsBefore, "threads_after": threadsAfter,
        "seconds": (Date().timeIntervalSince(start) * 100).rounded() / 100,
    ])
}
