import Foundation
import XCTest
@testable import ProfirestAPI

/// The feed read by polling `GET /v2/events`, in virtual time.
final class EventWatcherPollingTests: XCTestCase {
    func testWithoutAStoredCursorItStartsAtTheEndOfTheFeed() async {
        let h = FeedHarness(cursor: nil, pages: [page([], next: "c5"), page(["e6"], next: "c6")], streaming: false)
        let watcher = h.api.eventWatcher(h.options())
        let run = h.start(watcher)
        let first = await h.pageRequest(1)
        XCTAssertNil(query(first)["cursor"], "the first page is asked for without a cursor: the end of the feed")
        let second = await h.pageRequest(2)
        XCTAssertEqual(query(second)["cursor"], "c5")
        await h.until("the event") { h.log.events == ["events:e6"] }
        await h.until("the stored cursor") { h.storedCursor == "c6" }
        watcher.stop()
        await run.value
        XCTAssertEqual(h.log.all, ["events:e6"], "the empty first page is not handed to onEvents")
    }

    func testTheRequestCarriesTheFiltersAndAPageOfAtMost100() async {
        let types = ["order.created", "kitchen.ticket_updated"]
        let h = FeedHarness(types: types, pages: [page([], next: "c0")], streaming: false)
        let watcher = h.api.eventWatcher(h.options(types: types, limit: 500))
        let run = h.start(watcher)
        let request = await h.pageRequest(1)
        watcher.stop()
        await run.value
        XCTAssertEqual(query(request), [
            "cursor": "c0", "types": "order.created,kitchen.ticket_updated", "restaurant_id": "11", "limit": "100",
        ])
        XCTAssertEqual(request?.header("Authorization"), "Bearer at_feed_secret")
        XCTAssertNil(request?.header("Profirest-Staff-Token"))
        XCTAssertEqual(EventWatcher.Options(onEvents: { _ in }).pageLimit, 100)
        XCTAssertEqual(EventWatcher.Options(onEvents: { _ in }, limit: 0).pageLimit, 1)
    }

    func testAbsurdTimesReadAsTheDefaults() {
        func options(idle: TimeInterval, interval: TimeInterval) -> EventWatcher.Options {
            EventWatcher.Options(onEvents: { _ in }, streamIdleTimeout: idle, interval: interval)
        }
        for absurd in [0, -1, .infinity, .nan] as [TimeInterval] {
            XCTAssertEqual(options(idle: absurd, interval: 5).idleLimit, 45, "\(absurd)")
        }
        for absurd in [-1, .infinity, -.infinity, .nan] as [TimeInterval] {
            XCTAssertEqual(options(idle: 45, interval: absurd).pollInterval, 5, "\(absurd)")
        }
        XCTAssertEqual(options(idle: 0.5, interval: 0).idleLimit, 0.5)
        XCTAssertEqual(options(idle: 0.5, interval: 0).pollInterval, 0, "zero: back to back, as asked")
    }

    func testTheCursorTypesKeyIsTheSortedSubscription() async {
        let h = FeedHarness(cursor: nil, pages: [page([], next: "c1")], streaming: false)
        let watcher = h.api.eventWatcher(h.options(types: ["order.created", "kitchen.ticket_updated"]))
        let run = h.start(watcher)
        _ = await h.pageRequest(2)
        watcher.stop()
        await run.value
        let text = try? h.storage.get(FeedHarness.storageKey)
        XCTAssertTrue(text?.contains(#""events_cursor:11:kitchen.ticket_updated,order.created":"c1""#) == true, text ?? "")
    }

    func testTheCursorIsStoredOnlyAfterOnEventsReturned() async {
        let h = FeedHarness(pages: [page(["e1", "e2"], next: "c2")], streaming: false)
        let seen = Locked<[String?]>([])
        h.log.during.withLock { [h] in $0 = { _ in seen.withLock { $0.append(h.storedCursor) } } }
        let watcher = h.api.eventWatcher(h.options())
        let run = h.start(watcher)
        await h.until("the events") { h.log.events == ["events:e1,e2"] }
        await h.until("the stored cursor") { h.storedCursor == "c2" }
        watcher.stop()
        await run.value
        XCTAssertEqual(seen.withLock { $0 }, ["c0"], "while onEvents ran, the old cursor was still stored")
    }

    func testAnErrorFromOnEventsBringsTheSamePageAgain() async {
        let h = FeedHarness(pages: [page(["e1"], next: "c1"), page(["e1"], next: "c1")], streaming: false)
        h.log.failures.withLock { $0 = 1 }
        let watcher = h.api.eventWatcher(h.options())
        let run = h.start(watcher)
        await h.until("the failure") { h.log.all.count >= 2 }
        XCTAssertEqual(h.log.all, ["failed:e1", "error:app"])
        XCTAssertEqual(h.storedCursor, "c0")
        await h.clock.expectSleep(1)  // the first wait after an error: retryDelay, jitter pinned to 0
        let again = await h.pageRequest(2)
        XCTAssertEqual(query(again)["cursor"], "c0", "the same page is asked for again")
        await h.until("the second delivery") { h.log.events == ["events:e1"] }
        await h.until("the stored cursor") { h.storedCursor == "c1" }
        watcher.stop()
        await run.value
    }

    func testAFullPageIsFollowedAtOnceOtherwiseItWaitsTheInterval() async {
        let h = FeedHarness(
            pages: [page(["e1"], next: "c1", hasMore: true), page(["e2"], next: "c2"), page([], next: "c2")],
            streaming: false)
        let watcher = h.api.eventWatcher(h.options(interval: 7))
        let run = h.start(watcher)
        _ = await h.pageRequest(2)
        // Virtual time moves only when the test moves it: the second page came with no time passed, so without a wait.
        // (By now the reader may already be waiting the interval after the second page, on a busy machine.)
        XCTAssertEqual(h.clock.elapsed, 0, "no wait after a full page")
        XCTAssertTrue(h.clock.requested.allSatisfy { $0 == 7 }, "\(h.clock.requested)")
        await h.clock.expectSleep(7)
        let third = await h.pageRequest(3)
        XCTAssertEqual(query(third)["cursor"], "c2")
        watcher.stop()
        await run.value
        XCTAssertEqual(h.log.events, ["events:e1", "events:e2"])
    }

    func testErrorsWaitPerRetryAfterOrLongerAndLongerUpTo60Seconds() async {
        let failure = Step.problem(500, "internal_error")
        let h = FeedHarness(
            pages: Array(repeating: failure, count: 8) + [Step.problem(429, "rate_limited", headers: ["Retry-After": "17"]),
                                                          page([], next: "c0"), failure],
            streaming: false)
        let watcher = h.api.eventWatcher(h.options())
        let run = h.start(watcher)
        for wait in [1.0, 2, 4, 8, 16, 32, 60, 60, 17] { await h.clock.expectSleep(wait) }
        await h.clock.expectSleep(5)  // a good page: the interval
        await h.clock.expectSleep(1)  // and the next error starts the waits again from the beginning
        watcher.stop()
        await run.value
        XCTAssertEqual(h.log.errors.count, 10)
        XCTAssertEqual(h.log.errors.first, "error:internal_error")
        XCTAssertTrue(h.log.errors.contains("error:rate_limited"))
        XCTAssertEqual(h.clock.requested, [1, 2, 4, 8, 16, 32, 60, 60, 17, 5, 1])
    }

    func testAnExpiredCursorCallsOnResetAndStartsAgainFromTheEnd() async {
        let h = FeedHarness(
            pages: [Step.problem(410, "cursor_expired"), page([], next: "c90"), page(["e91"], next: "c91")],
            streaming: false)
        let storedDuringReset = Locked<[String?]>([])
        let log = h.log
        var options = h.options()
        options.onReset = { [h] error in
            storedDuringReset.withLock { $0.append(h.storedCursor) }
            log.record("reset:\(error.code)")
        }
        let watcher = h.api.eventWatcher(options)
        let run = h.start(watcher)
        await h.until("the next event") { h.log.events == ["events:e91"] }
        watcher.stop()
        await run.value
        XCTAssertEqual(h.log.all, ["reset:cursor_expired", "events:e91"])
        let requests = h.transport.pageRequests
        XCTAssertEqual(requests.map { query($0)["cursor"] }, ["c0", nil, "c90"])
        XCTAssertEqual(storedDuringReset.withLock { $0 }, ["c0"], "the expired cursor stays stored until the reload is done")
        XCTAssertEqual(h.storedCursor, "c91")
        XCTAssertEqual(h.log.errors, [])
        XCTAssertFalse(h.clock.requested.contains { $0 != 5 }, "a reset waits for nothing: \(h.clock.requested)")
    }

    func testAnExpiredCursorWithNextCursorReadsOnFromItWithoutAskingForTheEnd() async {
        let expired = Step.problem(410, "cursor_expired", extra: ["next_cursor": "c95"])
        let h = FeedHarness(pages: [expired, page(["e96"], next: "c96")], streaming: false)
        let storedDuringReset = Locked<[String?]>([])
        let log = h.log
        var options = h.options()
        options.onReset = { [h] error in
            storedDuringReset.withLock { $0.append(h.storedCursor) }
            log.record("reset:\(error.code)")
        }
        let watcher = h.api.eventWatcher(options)
        let run = h.start(watcher)
        await h.until("the next event") { h.log.events == ["events:e96"] }
        watcher.stop()
        await run.value
        XCTAssertEqual(h.log.all, ["reset:cursor_expired", "events:e96"])
        XCTAssertEqual(h.transport.pageRequests.map { query($0)["cursor"] }, ["c0", "c95"], "no request for the end")
        XCTAssertEqual(storedDuringReset.withLock { $0 }, ["c0"])
        XCTAssertEqual(h.storedCursor, "c96")
    }

    func testLosingThePairingEndsTheReading() async {
        let h = FeedHarness(streaming: false, authorizer: TestAuthorizer.unpaired)
        let watcher = h.api.eventWatcher(h.options())
        await watcher.run()
        XCTAssertEqual(h.log.all, ["error:not_paired"])
        XCTAssertEqual(h.transport.requests.count, 0)
    }

    func testAUsageErrorEndsTheReading() async {
        let changes = Changes()
        let clock = FeedClock(changes: changes)
        let api = ProfirestApi(options: .init(
            baseURL: "not a url", accessToken: "t", transport: FeedTransport(changes).scripted, clock: { clock.now },
            sleep: { try await clock.sleep($0) }))
        let errors = Locked([String]())
        await api.eventWatcher(.init(onEvents: { _ in }, onError: { e in errors.withLock { $0.append("\(type(of: e))") } })).run()
        XCTAssertEqual(errors.withLock { $0 }, ["ProfirestUsageError"])
    }

    func testStopEndsRunNowAndForGood() async {
        let h = FeedHarness(pages: [page([], next: "c0")], streaming: false)
        let watcher = h.api.eventWatcher(h.options())
        let run = h.start(watcher)
        await h.until("the interval wait") { h.clock.pending == [5] }
        watcher.stop()
        await run.value
        XCTAssertEqual(h.clock.pending, [])
        await watcher.run()  // returns at once
        XCTAssertEqual(h.transport.requests.count, 1)
    }

    func testASecondRunWhileOneReadsReturnsAtOnce() async {
        let h = FeedHarness(pages: [page([], next: "c0")], streaming: false)
        let watcher = h.api.eventWatcher(h.options())
        let run = h.start(watcher)
        await h.until("the interval wait") { h.clock.pending == [5] }
        await watcher.run()
        XCTAssertEqual(h.transport.requests.count, 1)
        watcher.stop()
        await run.value
    }

    func testCancellingTheTaskOfWatchEventsStopsTheReading() async {
        let h = FeedHarness(pages: [page(["e1"], next: "c1")], streaming: false)
        let feed = h.api.watchEvents(h.options())
        await h.until("the interval wait") { h.clock.pending == [5] }
        feed.cancel()
        await feed.value
        XCTAssertEqual(h.clock.pending, [])
        XCTAssertEqual(h.log.events, ["events:e1"])
    }

    func testACustomTransportThatCannotStreamIsPolled() async {
        let h = FeedHarness(pages: [page(["e1"], next: "c1"), page([], next: "c1")], streaming: false)
        let watcher = h.api.eventWatcher(h.options(stream: true))
        let run = h.start(watcher)
        await h.clock.expectSleep(5)
        _ = await h.pageRequest(2)
        watcher.stop()
        await run.value
        XCTAssertEqual(h.transport.streamRequests.count, 0)
        XCTAssertFalse(watcher.isStreaming)
    }

    func testStreamOffPollsEvenWithAStreamingTransport() async {
        let h = FeedHarness(pages: [page([], next: "c0"), page([], next: "c0")])
        let watcher = h.api.eventWatcher(h.options(stream: false))
        let run = h.start(watcher)
        await h.clock.expectSleep(5)
        _ = await h.pageRequest(2)
        watcher.stop()
        await run.value
        XCTAssertEqual(h.transport.streamRequests.count, 0)
    }
}
