import Foundation
import XCTest
@testable import ProfirestAPI

/// `once()`: the step for a scheduler — exactly one `GET /v2/events`, never the stream.
final class EventWatcherOnceTests: XCTestCase {
    func testOneRequestOneCallOneStoredCursor() async throws {
        let h = FeedHarness(pages: [page(["e1", "e2"], next: "c2", hasMore: true)])
        try await h.api.eventWatcher(h.options()).once()
        XCTAssertEqual(h.transport.requests.count, 1, "a full page is not followed")
        XCTAssertEqual(h.transport.requests.first?.url.path, "/v2/events")
        XCTAssertEqual(query(h.transport.requests.first)["cursor"], "c0")
        XCTAssertEqual(h.log.all, ["events:e1,e2"])
        XCTAssertEqual(h.storedCursor, "c2")
        XCTAssertEqual(h.clock.requested, [])
    }

    func testWithoutACursorItOnlyStoresTheEnd() async throws {
        let h = FeedHarness(cursor: nil, pages: [page([], next: "c7")])
        try await h.api.eventWatcher(h.options()).once()
        XCTAssertEqual(h.transport.requests.count, 1)
        XCTAssertNil(query(h.transport.requests.first)["cursor"])
        XCTAssertEqual(h.log.all, [])
        XCTAssertEqual(h.storedCursor, "c7")
    }

    func testAnErrorFromOnEventsIsThrownAndTheCursorStays() async {
        let h = FeedHarness(pages: [page(["e1"], next: "c1")])
        h.log.failures.withLock { $0 = 1 }
        do {
            try await h.api.eventWatcher(h.options()).once()
            XCTFail("nothing thrown")
        } catch {
            XCTAssertTrue(error is AppFailure, "the app's own error, as it threw it: \(error)")
        }
        XCTAssertEqual(h.storedCursor, "c0")
        XCTAssertEqual(h.log.errors, [], "once() throws instead of reporting")
    }

    func testARequestErrorIsThrownWithoutRetryingInTheFeed() async {
        let h = FeedHarness(pages: [Step.problem(403, "insufficient_scope")])
        let error = await apiError { try await h.api.eventWatcher(h.options()).once() }
        XCTAssertEqual(error?.code, ErrorCode.insufficientScope)
        XCTAssertEqual(h.transport.requests.count, 1)
        XCTAssertEqual(h.storedCursor, "c0")
    }

    func testAnExpiredCursorCallsOnResetThenStoresTheEndItCarried() async throws {
        let expired = Step.problem(410, "cursor_expired", extra: ["next_cursor": "c55"])
        let h = FeedHarness(pages: [expired, page(["e56"], next: "c56")])
        let storedDuringReset = Locked<[String?]>([])
        var options = h.options()
        options.onReset = { [h] _ in storedDuringReset.withLock { $0.append(h.storedCursor) } }
        let watcher = h.api.eventWatcher(options)
        try await watcher.once()
        XCTAssertEqual(h.transport.requests.count, 1, "still one request")
        XCTAssertEqual(storedDuringReset.withLock { $0 }, ["c0"], "the expired cursor stays until the reload is done")
        XCTAssertEqual(h.storedCursor, "c55")
        // The next step reads on from the end the error carried: what changed after the 410 is not missed.
        try await watcher.once()
        XCTAssertEqual(query(h.transport.requests.last)["cursor"], "c55")
        XCTAssertEqual(h.storedCursor, "c56")
    }

    func testAnExpiredCursorWithoutNextCursorCallsOnResetAndDropsTheCursor() async throws {
        let h = FeedHarness(pages: [Step.problem(410, "cursor_expired"), page([], next: "c50")])
        let watcher = h.api.eventWatcher(h.options())
        try await watcher.once()
        XCTAssertEqual(h.transport.requests.count, 1)
        XCTAssertEqual(h.log.all, ["reset:cursor_expired"])
        XCTAssertNil(h.storedCursor)
        // The next step starts at the end of the feed.
        try await watcher.once()
        XCTAssertNil(query(h.transport.requests.last)["cursor"])
        XCTAssertEqual(h.storedCursor, "c50")
    }
}
