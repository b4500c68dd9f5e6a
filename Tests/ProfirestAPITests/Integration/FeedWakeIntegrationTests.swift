import Foundation
import XCTest
@testable import ProfirestAPI

/// `wakeEventFeeds()` and the `events(…)` sequence against the sandbox over real sockets: a stream connection that
/// went silent without closing (`POST /_sandbox/stream/stall`, what a connection that died while the app was
/// suspended looks like) is replaced at the call, and the first fresh event comes within 2 s of it — where without the
/// call it would wait for the idle limit (twice the 15 s heartbeat plus 2 s).
final class FeedWakeIntegrationTests: XCTestCase {
    private static let shared = Locked<SandboxServer?>(nil)
    private var sandbox: SandboxServer!
    private var api: ProfirestApi!

    override func setUp() async throws {
        if Self.shared.withLock({ $0 }) == nil {
            let started = try SandboxServer.start()
            Self.shared.withLock { $0 = started }
        }
        sandbox = Self.shared.withLock { $0 }
        try await sandbox.raw("POST", "/_sandbox/reset")
        try await sandbox.config(["sse_retry_ms": 100, "heartbeat": 15])
        let storage = MemoryTokenStorage()
        try await sandbox.pairDevice(clientID: "profirest-kds", storage: storage)
        api = sandbox.client(clientID: "profirest-kds", storage: storage)
    }

    override class func tearDown() {
        shared.withLock { $0 }?.stop()
        shared.withLock { $0 = nil }
    }

    private func emit(_ tag: String) async throws {
        try await sandbox.raw("POST", "/_sandbox/catalog/11/sold_out", json: ["product_ids": [tag]])
    }

    private func openStreams() async throws -> Int {
        (try await sandbox.raw("GET", "/_sandbox/stream") as? [String: Any])?["open"] as? Int ?? -1
    }

    private func sseConnections() async throws -> Int { try await sandbox.stats()["sse_connections"] as? Int ?? 0 }

    /// Stalls the live connection and shows that an event made now does not come over it.
    private func stallTheStream(missing tag: String, of seen: FeedRecord) async throws {
        let stalled = try await sandbox.raw("POST", "/_sandbox/stream/stall") as? [String: Any]
        XCTAssertEqual(stalled?["stalled"] as? Int, 1)
        try await emit(tag)
        // Over 2 s of silence, so the wake-up does not take the connection for one that just spoke; the event is not
        // delivered meanwhile, and the reader does not notice by itself (its idle limit is 32 s).
        try await Task.sleep(nanoseconds: 3_000_000_000)
        XCTAssertFalse(seen.tags.contains(tag), "the stalled connection delivered nothing")
        let streams = try await sseConnections()
        XCTAssertEqual(streams, 1, "the reader did not reconnect by itself")
    }

    func testWakeReplacesASilentlyDeadConnectionAndTheFreshEventComesWithin2Seconds() async throws {
        let seen = FeedRecord()
        let watcher = api.eventWatcher(.init(
            restaurantID: "11", types: ["catalog.updated"], onEvents: { seen.add($0) },
            onError: { seen.note("error:\($0)") }))
        let run = Task { await watcher.run() }
        let live = await waitUntil(30) { watcher.isStreaming }
        XCTAssertTrue(live)
        XCTAssertEqual(api.state.feed, .live)
        try await emit("w-0")
        let first = await waitUntil(30) { seen.tags == ["w-0"] }
        XCTAssertTrue(first, "\(seen.tags)")
        try await stallTheStream(missing: "w-1", of: seen)

        let called = Date()
        api.wakeEventFeeds()
        let missed = await waitUntil(10) { seen.tags.contains("w-1") }
        let elapsed = Date().timeIntervalSince(called)
        XCTAssertTrue(missed)
        XCTAssertLessThan(elapsed, 2, "the event made while the connection was dead came \(elapsed) s after the call")
        try await emit("w-2")
        let fresh = await waitUntil(10) { seen.tags.contains("w-2") }
        XCTAssertTrue(fresh)
        XCTAssertEqual(seen.tags, ["w-0", "w-1", "w-2"], "in order, none twice")
        let streams = try await sseConnections()
        XCTAssertEqual(streams, 2, "one new connection, opened at the call")
        watcher.stop()
        await run.value
        XCTAssertEqual(seen.notes, [], "a replaced connection is no error")
        print("feed wake: the missed event came \(Int(elapsed * 1000)) ms after wakeEventFeeds()")
    }

    func testAnEventsSequenceIsWokenTooAndLeavingItsLoopClosesTheConnection() async throws {
        let seen = FeedRecord()
        let api = self.api!
        let reading = Task {
            for try await batch in api.events(restaurantID: "11", types: ["catalog.updated"]) {
                seen.add(batch.events)
                if seen.tags.contains("s-2") { break }
            }
        }
        let live = await waitUntil(30) { api.state.feed == .live }
        XCTAssertTrue(live)
        try await emit("s-0")
        let first = await waitUntil(30) { seen.tags == ["s-0"] }
        XCTAssertTrue(first, "\(seen.tags)")
        try await stallTheStream(missing: "s-1", of: seen)
        let called = Date()
        api.wakeEventFeeds()
        let missed = await waitUntil(10) { seen.tags.contains("s-1") }
        XCTAssertTrue(missed)
        XCTAssertLessThan(Date().timeIntervalSince(called), 2)
        let reopened = await waitUntil(10) { (try? await self.openStreams()) == 1 && api.state.feed == .live }
        XCTAssertTrue(reopened, "the stalled connection was closed, one new connection is open")
        try await emit("s-2")
        try await reading.value  // the loop breaks after s-2
        XCTAssertEqual(seen.tags, ["s-0", "s-1", "s-2"])
        try await assertClosedByTheClient()
        let stopped = await waitUntil(5) { api.state.feed == .stopped }
        XCTAssertTrue(stopped)
    }

    /// The sandbox notices a closed stream when it next has something to write (an event, or the keep-alive 15 s
    /// later): an event made now finds the connection the client closed and drops it, where an open one would be sent
    /// the event and stay.
    private func assertClosedByTheClient(file: StaticString = #filePath, line: UInt = #line) async throws {
        try await emit("after-the-loop")
        let closed = await waitUntil(2) { (try? await self.openStreams()) == 0 }
        XCTAssertTrue(closed, "the client closed the connection", file: file, line: line)
    }

    func testCancellingTheTaskOfAnEventsSequenceClosesTheConnectionPromptly() async throws {
        let api = self.api!
        let reading = Task {
            for try await _ in api.events(restaurantID: "11") {}
        }
        let live = await waitUntil(30) { (try? await self.openStreams()) == 1 }
        XCTAssertTrue(live)
        reading.cancel()
        try await reading.value
        try await assertClosedByTheClient()
    }
}
