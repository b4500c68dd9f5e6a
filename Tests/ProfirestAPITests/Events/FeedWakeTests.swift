import Foundation
import XCTest
@testable import ProfirestAPI

/// `wakeEventFeeds()` and `EventWatcher.wake()` in virtual time: a stream connection quiet for 2 s or more is closed and
/// opened again from the cursor at once (without the call only the idle limit would end it); one that just spoke is
/// kept; a wait between polls or after an error ends at once.
final class FeedWakeTests: XCTestCase {
    /// Opens the stream and lets its start deadline pass with the first bytes (and `chunk`) in at time 0: from
    /// then on the idle limit (twice the 15 s heartbeat plus 2 s) watches it, 22 s to go.
    private func connected(_ h: FeedHarness, _ live: LiveBody, sending chunk: String = "") async {
        await h.until("the start watch") { h.clock.pending == [10] }
        live.send(": open\n\n" + chunk)
        await h.until("the first bytes read") { live.reads == 2 }
        h.clock.advance(10)
        await h.until("the idle watch") { h.clock.pending == [22] }
    }

    func testAQuietConnectionIsReplacedAtOnceAndTheMissedEventsComeFromTheCursor() async {
        let h = FeedHarness()
        let first = LiveBody(h.changes)
        h.transport.addStreams([.open(first, heartbeat: 15)])
        let watcher = h.api.eventWatcher(h.options())
        let run = h.start(watcher)
        await connected(h, first, sending: frame("e1", cursor: "c1"))
        XCTAssertEqual(h.log.events, ["events:e1"])

        // Ten seconds without a byte: dead or quiet, it cannot tell; its idle limit would end it 22 s from now.
        XCTAssertFalse(first.closedByReader)
        let second = LiveBody(h.changes, [": open\n\n", frame("e2", cursor: "c2")])
        h.transport.addStreams([.open(second, heartbeat: 15)])
        h.api.wakeEventFeeds()
        await h.until("the quiet connection closed") { first.closedByReader }
        let reopened = await h.streamRequest(2)
        XCTAssertEqual(reopened?.header("Last-Event-ID"), "c1", "opened again from the cursor")
        await h.until("e2") { h.log.events == ["events:e1", "events:e2"] }
        XCTAssertEqual(h.clock.elapsed, 10, "no time passed: no reconnection wait, no idle limit")
        XCTAssertEqual(h.clock.requested.filter { $0 < 10 }, [], "no reconnection delay")
        XCTAssertEqual(h.log.errors, [], "a replaced connection is no error")
        await h.until("streaming again") { watcher.isStreaming }
        watcher.stop()
        await run.value
    }

    func testAConnectionThatJustSpokeIsKept() async {
        let h = FeedHarness()
        let live = LiveBody(h.changes)
        h.transport.addStreams([.open(live, heartbeat: 15)])
        let watcher = h.api.eventWatcher(h.options())
        let run = h.start(watcher)
        await h.until("the start watch") { h.clock.pending == [10] }
        live.send(": open\n\n")
        await h.until("the first bytes read") { live.reads == 2 }
        watcher.wake()  // its last byte came just now
        live.send(frame("e1", cursor: "c1"))
        await h.until("e1 over the same connection") { h.log.events == ["events:e1"] }
        h.clock.advance(1.9)  // under 2 s since e1
        h.api.wakeEventFeeds()
        live.send(frame("e2", cursor: "c2"))
        await h.until("e2 over the same connection") { h.log.events == ["events:e1", "events:e2"] }
        XCTAssertFalse(live.closedByReader)
        XCTAssertEqual(h.transport.streamRequests.count, 1)
        watcher.stop()
        await run.value
    }

    func testWithoutAWakeOnlyTheIdleLimitEndsAQuietConnection() async {
        let h = FeedHarness()
        let live = LiveBody(h.changes)
        h.transport.addStreams([.open(live, heartbeat: 15)])
        let watcher = h.api.eventWatcher(h.options())
        let run = h.start(watcher)
        await connected(h, live)
        h.clock.advance(21)
        XCTAssertFalse(live.closedByReader, "31 s of silence: still waiting for the idle limit")
        h.clock.advance(1)
        await h.until("closed by the idle limit") { live.closedByReader }
        XCTAssertEqual(h.clock.elapsed, 32)
        watcher.stop()
        await run.value
    }

    func testAWaitBetweenPollsEndsAtOnce() async {
        let h = FeedHarness(pages: [page([], next: "c0"), page(["e1"], next: "c1")], streaming: false)
        let watcher = h.api.eventWatcher(h.options(interval: 30))
        let run = h.start(watcher)
        await h.until("the interval") { h.clock.pending == [30] }
        XCTAssertEqual(h.api.state.feed, .polling)
        watcher.wake()
        _ = await h.pageRequest(2)
        await h.until("e1") { h.log.events == ["events:e1"] }
        XCTAssertEqual(h.clock.elapsed, 0, "polled at the call, not after the interval")
        watcher.stop()
        await run.value
    }

    func testAWaitAfterAnErrorEndsAtOnce() async {
        let busy = Step.problem(503, "service_unavailable", headers: ["Retry-After": "60"])
        let h = FeedHarness(pages: [busy, page(["e1"], next: "c1")], streaming: false)
        let watcher = h.api.eventWatcher(h.options())
        let run = h.start(watcher)
        await h.until("the Retry-After") { h.clock.pending == [60] }
        XCTAssertEqual(h.api.state.feed, .retrying)
        h.api.wakeEventFeeds()
        await h.until("e1") { h.log.events == ["events:e1"] }
        XCTAssertEqual(h.clock.elapsed, 0)
        XCTAssertEqual(h.log.errors, ["error:service_unavailable"])
        watcher.stop()
        await run.value
    }

    func testAWakeWithNoReaderRunningDoesNothing() {
        let h = FeedHarness()
        h.api.wakeEventFeeds()
        h.api.eventWatcher(h.options()).wake()
        XCTAssertEqual(h.transport.requests.count, 0)
        XCTAssertEqual(h.api.state.feed, .stopped)
    }
}
