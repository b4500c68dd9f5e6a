import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// The outbox honours every Retry-After, its first attempt's included, however `run()`, `flush()` and a write that is
/// handed in interleave: on a virtual clock that the client's `sleep` moves on, the next attempt after an answer with
/// `Retry-After: N` comes N seconds or more after it.
final class OutboxRetryAfterTests: XCTestCase, OutboxTesting {
    var directory: URL!

    override func setUpWithError() throws { directory = try Self.makeOutboxDirectory() }
    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    /// A client on a virtual clock: `sleep` moves it on; the transport notes the clock at every request.
    final class Rig: @unchecked Sendable {
        let now = Locked(Date(timeIntervalSince1970: 1_790_000_000))
        let times = Locked<[TimeInterval]>([])
        let sleeps = Locked<[TimeInterval]>([])
        var api: ProfirestApi!
        var outbox: Outbox!
        let start: Date

        init(path: String, answer: @escaping @Sendable (Int, Rig) async -> Step) throws {
            start = now.withLock { $0 }
            let transport = ScriptedTransport { _ in
                let number = self.times.withLock { times in
                    times.append(self.now.withLock { $0 }.timeIntervalSince(self.start))
                    return times.count
                }
                return await answer(number, self)
            }
            api = ProfirestApi(options: .init(
                baseURL: "https://api.mujprofirest.cz", accessToken: "at_test", retries: 0, transport: transport,
                clock: { self.now.withLock { $0 } },
                sleep: { seconds in
                    try Task.checkCancellation()
                    self.sleeps.withLock { $0.append(seconds) }
                    self.now.withLock { $0 = $0.addingTimeInterval(seconds) }
                    await Task.yield()
                }))
            outbox = try api.outbox(path: path)
        }

        var requestTimes: [TimeInterval] { times.withLock { $0 } }

        func advance(_ seconds: TimeInterval) { now.withLock { $0 = $0.addingTimeInterval(seconds) } }

        /// Waits (real time, bounded) until `condition` holds.
        func until(_ what: String, _ condition: () -> Bool) async throws {
            let deadline = Date().addingTimeInterval(60)
            while !condition() {
                guard Date() < deadline else { throw ProfirestTestFailure("timed out waiting for \(what)") }
                try await Task.sleep(nanoseconds: 1_000_000)
            }
        }
    }

    static func unavailable(_ seconds: Int) -> Step {
        .problem(503, "service_unavailable", headers: ["Retry-After": "\(seconds)"])
    }

    static let created = Step.json(201, ["id": "c1"])

    private func assertGaps(_ times: [TimeInterval], atLeast gaps: [TimeInterval], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(times.count, gaps.count + 1, "attempts at \(times)", file: file, line: line)
        for (index, gap) in gaps.enumerated() where index + 1 < times.count {
            XCTAssertGreaterThanOrEqual(times[index + 1] - times[index], gap, "attempt \(index + 2) of \(times)", file: file, line: line)
        }
    }

    /// The observed race: `run()` starts while the write's first attempt is in flight and queues for the delivery
    /// lock; once the 503 is in, it must wait its Retry-After, not send at once.
    func testRunQueuedBehindTheFirstAttemptWaitsItsRetryAfter() async throws {
        let runner = Locked<Task<Void, Never>?>(nil)
        let rig = try Rig(path: path) { number, rig in
            guard number == 1 else { return Self.created }
            // run() now waits for the lock that the write's attempt holds.
            runner.withLock { $0 = Task { await rig.outbox.run() } }
            try? await rig.until("run() to queue for the lock") { rig.outbox.delivering.waiting >= 1 }
            return Self.unavailable(2)
        }
        // Queued or already delivered by run(): its virtual wait passes at once.
        _ = try await rig.outbox.post("/customers", body: ["name": "Jana"])
        try await rig.until("the write to go") { rig.outbox.status.count == 0 }
        let running = runner.withLock { $0 }
        running?.cancel()
        await running?.value
        assertGaps(rig.requestTimes, atLeast: [2])
    }

    func testRunWaitingForWorkWaitsTheFirstAttemptsRetryAfter() async throws {
        let rig = try Rig(path: path) { number, _ in number == 1 ? Self.unavailable(3) : Self.created }
        let runner = Task { await rig.outbox.run() }
        try await rig.until("run() to wait for work") { rig.outbox.state.withLock { $0.wake != nil } }
        _ = try await rig.outbox.post("/customers", body: ["name": "Jana"])
        try await rig.until("the write to go") { rig.outbox.status.count == 0 }
        runner.cancel()
        await runner.value
        assertGaps(rig.requestTimes, atLeast: [3])
    }

    func testRunStartedAfterTheWriteWasQueuedWaitsItsRetryAfter() async throws {
        let rig = try Rig(path: path) { number, _ in number == 1 ? Self.unavailable(4) : Self.created }
        _ = try await rig.outbox.post("/customers", body: ["name": "Jana"])
        let runner = Task { await rig.outbox.run() }
        try await rig.until("the write to go") { rig.outbox.status.count == 0 }
        runner.cancel()
        await runner.value
        assertGaps(rig.requestTimes, atLeast: [4])
    }

    func testRunsOwnRoundsWaitEachRetryAfter() async throws {
        let rig = try Rig(path: path) { number, _ in
            switch number {
            case 1: return .fail(URLError(.notConnectedToInternet))
            case 2: return Self.unavailable(5)
            case 3: return Self.unavailable(7)
            default: return Self.created
            }
        }
        _ = try await rig.outbox.post("/customers", body: ["name": "Jana"])
        let runner = Task { await rig.outbox.run() }
        try await rig.until("the write to go") { rig.outbox.status.count == 0 }
        runner.cancel()
        await runner.value
        assertGaps(rig.requestTimes, atLeast: [0, 5, 7])
    }

    /// `flush()` is the app asking now: it skips the outbox's own backoff but not the server's Retry-After.
    func testFlushSendsNothingWhileTheServersRetryAfterHolds() async throws {
        let rig = try Rig(path: path) { number, _ in number == 1 ? Self.unavailable(10) : Self.created }
        _ = try await rig.outbox.post("/customers", body: ["name": "Jana"])
        rig.advance(4)
        var status = await rig.outbox.flush()
        XCTAssertEqual(status.count, 1)
        XCTAssertEqual(rig.requestTimes.count, 1, "held by the Retry-After")
        rig.advance(6)
        status = await rig.outbox.flush()
        XCTAssertEqual(status.count, 0)
        assertGaps(rig.requestTimes, atLeast: [10])
    }

    /// A flush that fails with a Retry-After while `run()` waits a shorter backoff: run() waits the flush's too.
    func testAFlushsRetryAfterHoldsRunToo() async throws {
        let rig = try Rig(path: path) { number, rig in
            switch number {
            case 1: return .fail(URLError(.notConnectedToInternet))
            case 2: return Self.unavailable(20)
            default: return Self.created
            }
        }
        _ = try await rig.outbox.post("/customers", body: ["name": "Jana"])
        _ = await rig.outbox.flush()
        let runner = Task { await rig.outbox.run() }
        try await rig.until("the write to go") { rig.outbox.status.count == 0 }
        runner.cancel()
        await runner.value
        assertGaps(rig.requestTimes, atLeast: [0, 20])
    }

    /// A write handed in while the server's Retry-After holds is journaled, not sent; run() sends both after it.
    func testAWriteHandedInDuringTheHoldWaitsForIt() async throws {
        let rig = try Rig(path: path) { number, _ in number == 1 ? Self.unavailable(6) : Self.created }
        _ = try await rig.outbox.post("/customers", body: ["name": "Jana"], idempotencyKey: "k1")
        rig.advance(1)
        guard case .queued(let second) = try await rig.outbox.post("/customers", body: ["name": "Petr"], idempotencyKey: "k2") else {
            return XCTFail("held")
        }
        XCTAssertEqual(second.attempts, 0)
        let runner = Task { await rig.outbox.run() }
        try await rig.until("the writes to go") { rig.outbox.status.count == 0 }
        runner.cancel()
        await runner.value
        XCTAssertEqual(rig.requestTimes.count, 3)
        XCTAssertGreaterThanOrEqual(rig.requestTimes[1], 6)
    }
}
