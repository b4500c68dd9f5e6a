import Foundation
import XCTest
@testable import ProfirestAPI

/// The event feed against the sandbox over real sockets: the live stream, its outage and return, a cut
/// connection, keep-alives and an expired cursor. Events are made with the admin API (`sold_out` emits
/// `catalog.updated`), each tagged, so a test can tell that every event came exactly once and in order.
/// Short reconnection (`sse_retry_ms`) and polling intervals keep them fast; one sandbox serves the class, reset
/// to its seed (stats, faults, stream service and durations too) before each test.
final class EventFeedIntegrationTests: XCTestCase {
    private static let shared = Locked<SandboxServer?>(nil)
    private var sandbox: SandboxServer!
    private var api: ProfirestApi!
    private var storage: MemoryTokenStorage!
    private let seen = FeedRecord()

    override func setUp() async throws {
        if Self.shared.withLock({ $0 }) == nil {
            let started = try SandboxServer.start()
            Self.shared.withLock { $0 = started }
        }
        sandbox = Self.shared.withLock { $0 }
        try await sandbox.raw("POST", "/_sandbox/reset")
        try await sandbox.raw("POST", "/_sandbox/stream", json: ["down": false, "retry_after": 300])
        try await sandbox.config(["sse_retry_ms": 100, "heartbeat": 15])
        storage = MemoryTokenStorage()
        try await sandbox.pairDevice(clientID: "profirest-kds", storage: storage)
        api = sandbox.client(clientID: "profirest-kds", storage: storage)
    }

    override class func tearDown() {
        shared.withLock { $0 }?.stop()
        shared.withLock { $0 = nil }
    }

    private func watcher(stream: Bool = true, idle: TimeInterval = 45) -> EventWatcher {
        let seen = self.seen
        return api.eventWatcher(.init(
            restaurantID: "11", types: ["catalog.updated"], onEvents: { seen.add($0) },
            onReset: { seen.note("reset:\($0.code)") }, onError: { seen.note("error:\($0)") }, stream: stream,
            streamIdleTimeout: idle, interval: 0.2))
    }

    /// One `catalog.updated` event carrying `tag`.
    private func emit(_ tag: String) async throws {
        try await sandbox.raw("POST", "/_sandbox/catalog/11/sold_out", json: ["product_ids": [tag]])
    }

    private func stats() async throws -> (pages: Int, streams: Int) {
        let stats = try await sandbox.stats()
        let requests = stats["requests"] as? [String: Int] ?? [:]
        return (requests["GET /v2/events"] ?? 0, stats["sse_connections"] as? Int ?? 0)
    }

    private func expect(_ tags: [String], file: StaticString = #filePath, line: UInt = #line) async {
        let arrived = await waitUntil(30) { self.seen.tags.count >= tags.count }
        XCTAssertTrue(arrived, "waited for \(tags), have \(seen.tags)", file: file, line: line)
        XCTAssertEqual(seen.tags, tags, file: file, line: line)
    }

    private func live(_ watcher: EventWatcher, _ expected: Bool = true, file: StaticString = #filePath, line: UInt = #line) async {
        let reached = await waitUntil(30) { watcher.isStreaming == expected }
        XCTAssertTrue(reached, "isStreaming never became \(expected)", file: file, line: line)
    }

    func testLiveEventsArriveOverTheStream() async throws {
        let watcher = watcher()
        let run = Task { await watcher.run() }
        await live(watcher)
        for i in 0..<3 { try await emit("live-\(i)") }
        await expect(["live-0", "live-1", "live-2"])
        let counts = try await stats()
        XCTAssertEqual(counts.pages, 1, "one page for the start at the end of the feed, then only the stream")
        XCTAssertEqual(counts.streams, 1)
        watcher.stop()
        await run.value
        XCTAssertFalse(watcher.isStreaming)
        XCTAssertEqual(seen.notes, [])
        let state = try storage.get("profirest-api:profirest-kds") ?? ""
        XCTAssertTrue(state.contains(#""events_cursor:11:catalog.updated":"ev_c_"#), state)
    }

    func testStreamDownMeansPollingAndBackToTheStreamSkippingNothing() async throws {
        let watcher = watcher()
        let run = Task { await watcher.run() }
        await live(watcher)
        try await emit("a-0")
        await expect(["a-0"])
        try await sandbox.raw("POST", "/_sandbox/stream", json: ["down": true, "retry_after": 1])
        await live(watcher, false)
        try await emit("a-1")
        try await emit("a-2")
        await expect(["a-0", "a-1", "a-2"])
        let polled = try await stats().pages
        XCTAssertGreaterThan(polled, 1, "the events while the stream was down came by polling")
        try await sandbox.raw("POST", "/_sandbox/stream", json: ["down": false])
        try await emit("a-3")  // likely before the stream is back: by polling, or by the stream from the polled cursor
        await live(watcher)
        try await emit("a-4")
        await expect(["a-0", "a-1", "a-2", "a-3", "a-4"])
        let streams = try await stats().streams
        XCTAssertGreaterThanOrEqual(streams, 2)
        watcher.stop()
        await run.value
        XCTAssertEqual(seen.notes, [], "an outage of the stream is no error")
    }

    func testACutConnectionReconnectsFromItsCursor() async throws {
        let watcher = watcher()
        let run = Task { await watcher.run() }
        await live(watcher)
        try await emit("c-0")
        await expect(["c-0"])
        try await sandbox.raw("POST", "/_sandbox/stream/cut")
        try await emit("c-1")  // while the connection is down
        await expect(["c-0", "c-1"])
        await live(watcher)
        try await emit("c-2")
        await expect(["c-0", "c-1", "c-2"])
        let counts = try await stats()
        XCTAssertEqual(counts.streams, 2)
        XCTAssertEqual(counts.pages, 1, "reconnected without polling")
        watcher.stop()
        await run.value
        XCTAssertEqual(seen.notes, [])
    }

    func testKeepAlivesHoldAQuietStreamOpenPastTheIdleLimit() async throws {
        // Keep-alives every 0.2 s against an idle limit of 2.4 s (twice the heartbeat plus 2 s, within idle: 3): only a
        // gap of over two seconds between them — not seen even at load 6 on 2 cores — would reopen the stream.
        try await sandbox.config(["heartbeat": 0.2])
        let watcher = watcher(idle: 3)
        let run = Task { await watcher.run() }
        await live(watcher)
        try await Task.sleep(nanoseconds: 6_000_000_000)
        try await emit("k-0")
        await expect(["k-0"])
        let streams = try await stats().streams
        XCTAssertEqual(streams, 1, "keep-alives every 0.2 s kept the connection past the 2.4 s limit")
        watcher.stop()
        await run.value
    }

    func testAQuietStreamWithoutKeepAlivesIsReopened() async throws {
        let watcher = watcher(idle: 0.5)  // the sandbox's keep-alive comes every 15 s
        let run = Task { await watcher.run() }
        let reopened = await waitUntil(30) { ((try? await self.stats().streams) ?? 0) >= 2 }
        XCTAssertTrue(reopened)
        try await emit("q-0")
        await expect(["q-0"])
        watcher.stop()
        await run.value
        XCTAssertEqual(seen.notes, [])
    }

    func testAnExpiredCursorCallsOnResetThenReadsOnFromTheEnd() async throws {
        let watcher = watcher()
        let run = Task { await watcher.run() }
        await live(watcher)
        try await emit("r-0")
        await expect(["r-0"])
        try await sandbox.raw("POST", "/_sandbox/cursors/expire")
        try await sandbox.raw("POST", "/_sandbox/stream/cut")  // the reconnection presents the expired cursor
        let reset = await waitUntil(30) { self.seen.notes == ["reset:cursor_expired"] }
        XCTAssertTrue(reset, "\(seen.notes)")
        await live(watcher)
        try await emit("r-1")
        await expect(["r-0", "r-1"])
        watcher.stop()
        await run.value
    }

    func testPollingOnlyAndAnExpiredCursor() async throws {
        let watcher = watcher(stream: false)
        let run = Task { await watcher.run() }
        let started = await waitUntil(30) { ((try? await self.stats().pages) ?? 0) >= 2 }
        XCTAssertTrue(started)
        try await emit("p-0")
        await expect(["p-0"])
        try await sandbox.raw("POST", "/_sandbox/cursors/expire")
        let reset = await waitUntil(30) { self.seen.notes == ["reset:cursor_expired"] }
        XCTAssertTrue(reset, "\(seen.notes)")
        try await emit("p-1")
        await expect(["p-0", "p-1"])
        watcher.stop()
        await run.value
        let streams = try await stats().streams
        XCTAssertEqual(streams, 0)
        XCTAssertFalse(watcher.isStreaming)
    }

    func testOnceReadsOnePage() async throws {
        let watcher = watcher()
        try await watcher.once()  // stores the end of the feed
        try await emit("o-0")
        try await emit("o-1")
        try await watcher.once()
        XCTAssertEqual(seen.tags, ["o-0", "o-1"])
        let counts = try await stats()
        XCTAssertEqual(counts.pages, 2)
        XCTAssertEqual(counts.streams, 0)
    }

    func testOnceAfterAnExpiredCursorMissesNothingThatChangedAfterTheReload() async throws {
        let watcher = watcher()
        try await watcher.once()  // stores the end of the feed
        try await sandbox.raw("POST", "/_sandbox/cursors/expire")
        try await watcher.once()  // 410: onReset (the app reloads), then the end the error carried is stored
        XCTAssertEqual(seen.notes, ["reset:cursor_expired"])
        try await emit("x-0")  // changed after the reload, before the next step
        try await watcher.once()
        XCTAssertEqual(seen.tags, ["x-0"])
        let pages = try await stats().pages
        XCTAssertEqual(pages, 3, "one request a step")
    }
}

/// What the handlers of an integration test saw.
final class FeedRecord: @unchecked Sendable {
    private let state = Locked((events: [Event](), notes: [String]()))

    func add(_ events: [Event]) { state.withLock { $0.events += events } }
    func note(_ text: String) { state.withLock { $0.notes.append(text) } }

    /// The first sold-out product of each `catalog.updated` event: the tag the test gave it.
    var tags: [String] {
        state.withLock { $0.events }.compactMap { $0.data["sold_out"]?.arrayValue?.first?.stringValue }
    }

    var notes: [String] { state.withLock { $0.notes } }
}
