import Foundation
import ProfirestTesting
import XCTest

final class VirtualClockTests: XCTestCase {
    func testASleepEndsOnlyWhenTheClockPassesItsEnd() async throws {
        let clock = VirtualClock(start: Date(timeIntervalSince1970: 0))
        let ended = Recorder<TimeInterval>()
        let sleeper = Task {
            try await clock.sleep(10)
            ended.add([clock.elapsed])
        }
        await clock.waitForSleep()
        clock.advance(9)
        XCTAssertEqual(clock.pendingSleeps, [1])
        XCTAssertTrue(ended.items.isEmpty)
        clock.advance(1)
        try await sleeper.value
        XCTAssertEqual(ended.items, [10])
        XCTAssertEqual(clock.now, Date(timeIntervalSince1970: 10))
        XCTAssertEqual(clock.requestedSleeps, [10])
    }

    func testACancelledSleepThrowsAtOnce() async {
        let clock = VirtualClock()
        let sleeper = Task { try await clock.sleep(3600) }
        await clock.waitForSleep()
        sleeper.cancel()
        do {
            try await sleeper.value
            XCTFail("a cancelled sleep returned")
        } catch {
            XCTAssertTrue(error is CancellationError)
        }
        XCTAssertEqual(clock.pendingSleeps, [])
    }

    func testWaitForSleepGivesUpWhenNothingSleeps() async {
        let waited = await VirtualClock().waitForSleep(limit: 0.01)
        XCTAssertFalse(waited)
    }
}
