import Foundation
import XCTest
@testable import ProfirestAPI

/// `api.events(…)`: the watcher's reading as an asynchronous sequence, in virtual time. The rule under test: the cursor
/// of a batch is stored when the consumer asks for the next batch, never earlier, and not at all when the loop is
/// left by a throw, a `break` or a cancellation — then the next sequence begins with that batch again.
final class EventBatchesTests: XCTestCase {
    func testTheCursorOfABatchIsStoredWhenTheNextBatchIsAskedFor() async throws {
        let h = FeedHarness()
        let live = LiveBody(h.changes, ["retry: 2000\n\n", frame("e1", cursor: "c1") + frame("e2", cursor: "c2")])
        h.transport.addStreams([.open(live)])
        do {
            var batches = h.api.events(restaurantID: "11").makeAsyncIterator()
            XCTAssertEqual(h.transport.requests.count, 0, "nothing is read before the first next()")
            let first = try await batches.next()
            XCTAssertEqual(first?.events.map(\.id), ["e1", "e2"])
            XCTAssertNil(first?.reset)
            XCTAssertEqual(h.transport.streamRequests.first?.header("Last-Event-ID"), "c0")
            XCTAssertEqual(h.storedCursor, "c0", "not stored while the batch is being handled")
            live.send(frame("e3", cursor: "c3"))
            let second = try await batches.next()
            XCTAssertEqual(second?.events.map(\.id), ["e3"])
            XCTAssertEqual(h.storedCursor, "c2", "stored when the next batch was asked for, before it was handed out")
            XCTAssertEqual(h.api.state.feed, .live)
            // The iterator goes here without asking again: e3 was not handled.
        }
        await h.until("the connection closed") { live.closedByReader }
        await h.until("the reader stopped") { h.api.state.feed == .stopped }
        XCTAssertEqual(h.storedCursor, "c2")

        h.transport.addStreams([.open(LiveBody(h.changes, [frame("e3", cursor: "c3")]))])
        let api = h.api
        let again = Task { () -> [String] in
            for try await batch in api.events(restaurantID: "11") { return batch.events.map(\.id) }
            return []
        }
        let ids = try await again.value
        XCTAssertEqual(ids, ["e3"], "the next sequence begins with the batch that was not handled")
        XCTAssertEqual(h.transport.streamRequests.last?.header("Last-Event-ID"), "c2")
        XCTAssertEqual(h.storedCursor, "c2")
    }

    func testABatchWhoseLoopBodyThrewComesAgainInTheNextSequence() async throws {
        let h = FeedHarness()
        let live = LiveBody(h.changes, [frame("e1", cursor: "c1")])
        h.transport.addStreams([.open(live)])
        let api = h.api
        let failing = Task {
            for try await _ in api.events(restaurantID: "11") { throw AppFailure() }
        }
        do {
            try await failing.value
            XCTFail("the loop's error comes out of it")
        } catch is AppFailure {}
        await h.until("the connection closed") { live.closedByReader }
        XCTAssertEqual(h.storedCursor, "c0")

        let second = LiveBody(h.changes, [frame("e1", cursor: "c1")])
        h.transport.addStreams([.open(second)])
        let seen = Locked<[String]>([])
        let reading = Task {
            for try await batch in api.events(restaurantID: "11") {
                seen.withLock { $0 += batch.events.map(\.id) }
                h.changes.signal()
            }
        }
        await h.until("e1 again") { seen.withLock { $0 } == ["e1"] }
        second.send(frame("e2", cursor: "c2"))
        // Each body returned and the loop asked for more: both cursors are stored in turn.
        await h.until("e2, and its cursor stored") { seen.withLock { $0 } == ["e1", "e2"] && h.storedCursor == "c2" }
        reading.cancel()
        try await reading.value
        await h.until("the connection closed") { second.closedByReader }
        XCTAssertEqual(h.storedCursor, "c2")
    }

    func testATaskCancelledMidBodyLeavesTheBatchForTheNextSequence() async throws {
        let h = FeedHarness()
        let live = LiveBody(h.changes, [frame("e1", cursor: "c1")])
        h.transport.addStreams([.open(live)])
        let api = h.api
        let inBody = Locked(false)
        let task = Task { () -> Int in
            var bodies = 0
            for try await _ in api.events(restaurantID: "11") {
                bodies += 1
                inBody.withLock { $0 = true }
                h.changes.signal()
                // Cancelled here: the body still runs to its end, and the loop asks for more from a cancelled task.
                try? await Task.sleep(nanoseconds: 600_000_000_000)
            }
            return bodies
        }
        await h.until("in the body") { inBody.withLock { $0 } }
        task.cancel()
        let bodies = try await task.value
        XCTAssertEqual(bodies, 1, "the loop ended without an error after the cancellation")
        await h.until("the connection closed") { live.closedByReader }
        XCTAssertEqual(h.storedCursor, "c0", "a batch whose task was cancelled is not taken as handled")
    }

    func testACursorExpiredIsAResetBatchAndTheNewStartIsStoredAfterIt() async throws {
        let expired = Step.problem(410, "cursor_expired", extra: ["next_cursor": "c95"])
        let h = FeedHarness(pages: [expired, page(["e96"], next: "c96")], streaming: false)
        var batches = h.api.events(restaurantID: "11", stream: false).makeAsyncIterator()
        let reset = try await batches.next()
        XCTAssertEqual(reset?.reset?.code, ErrorCode.cursorExpired)
        XCTAssertEqual(reset?.events.count, 0)
        XCTAssertEqual(h.storedCursor, "c0", "the expired cursor stays until the reload was handled")
        let next = try await batches.next()
        XCTAssertEqual(next?.events.map(\.id), ["e96"])
        XCTAssertNil(next?.reset)
        XCTAssertEqual(query(h.transport.pageRequests.last)["cursor"], "c95")
        XCTAssertEqual(h.storedCursor, "c95")
    }

    func testAResetLeftUnhandledIsMetAgainByTheNextSequence() async throws {
        let expired = Step.problem(410, "cursor_expired", extra: ["next_cursor": "c95"])
        let h = FeedHarness(pages: [expired, expired], streaming: false)
        do {
            var batches = h.api.events(restaurantID: "11", stream: false).makeAsyncIterator()
            let reset = try await batches.next()
            XCTAssertNotNil(reset?.reset)
        }
        await h.until("the reader stopped") { h.api.state.feed == .stopped }
        XCTAssertEqual(h.storedCursor, "c0", "the reload was not done: the expired cursor stays")
        var again = h.api.events(restaurantID: "11", stream: false).makeAsyncIterator()
        let reset = try await again.next()
        XCTAssertEqual(reset?.reset?.code, ErrorCode.cursorExpired)
    }

    func testErrorsAreWaitedOutAsTheWatcherWaitsThemOut() async throws {
        let h = FeedHarness(pages: [.problem(503, "service_unavailable"), page(["e1"], next: "c1")], streaming: false)
        let errors = Locked<[String]>([])
        let api = h.api
        let reading = Task { () -> [String] in
            let sequence = api.events(
                restaurantID: "11", onError: { error in errors.withLock { $0.append("\((error as? ProfirestAPIError)?.code ?? "?")") } },
                stream: false)
            for try await batch in sequence { return batch.events.map(\.id) }
            return []
        }
        await h.until("retrying") { h.api.state.feed == .retrying }
        await h.clock.expectSleep(1)  // the first wait after an error, as the watcher's
        let ids = try await reading.value
        XCTAssertEqual(ids, ["e1"])
        XCTAssertEqual(errors.withLock { $0 }, ["service_unavailable"])
    }

    func testLosingThePairingEndsTheSequenceWithNotPaired() async {
        let h = FeedHarness(streaming: false, authorizer: TestAuthorizer.unpaired)
        do {
            for try await _ in h.api.events(restaurantID: "11") { XCTFail("no batch") }
            XCTFail("the sequence ends with the error")
        } catch let error as ProfirestAPIError {
            XCTAssertEqual(error.code, ErrorCode.notPaired)
        } catch {
            XCTFail("\(error)")
        }
        XCTAssertEqual(h.transport.requests.count, 0)
    }

    func testTwoTasksOnOneIteratorIsAUsageError() async throws {
        let h = FeedHarness()
        h.transport.addStreams([.open(LiveBody(h.changes, [": open\n\n"]))])
        let iterator = h.api.events(restaurantID: "11").makeAsyncIterator()
        let waiting = Task {
            var mine = iterator
            return try await mine.next()
        }
        await h.until("the first is waiting") { h.api.state.feed == .live }
        var other = iterator
        do {
            _ = try await other.next()
            XCTFail("a second waiting task is refused")
        } catch is ProfirestUsageError {}
        waiting.cancel()
        let result = try await waiting.value
        XCTAssertNil(result, "cancelled, the waiting next() answers nil")
    }
}
