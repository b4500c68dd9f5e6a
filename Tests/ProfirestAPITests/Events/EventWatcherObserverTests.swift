import Foundation
import XCTest
@testable import ProfirestAPI

/// The observer hears how the feed is read: polling while the stream is not served, then connected, then dropped.
final class EventWatcherObserverTests: XCTestCase {
    func testPollingThenTheStreamThenItsEndAreHeard() async {
        let events = Locked([ProfirestEvent]())
        let h = FeedHarness(
            pages: [page(["e1"], next: "c1"), page([], next: "c1")],
            streams: [.answer(.problem(503, "stream_unavailable", headers: ["Retry-After": "10"]))],
            observer: { event in events.withLock { $0.append(event) } })
        let live = LiveBody(h.changes)
        h.transport.addStreams([.open(live)])
        let watcher = h.api.eventWatcher(h.options())
        let run = h.start(watcher)
        for _ in 0..<2 { await h.clock.expectSleep(5) }
        _ = await h.streamRequest(2)
        await h.until("streaming") { watcher.isStreaming }
        watcher.stop()
        await run.value
        let feed = events.withLock { $0 }.compactMap { event -> ProfirestEvent.FeedChange? in
            if case .feed(let change) = event { return change }
            return nil
        }
        XCTAssertEqual(feed, [.polling, .connected, .dropped])
    }
}
