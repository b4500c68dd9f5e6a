import Foundation
import XCTest
@testable import ProfirestAPI

/// The feed's waits after a stream connection ended, decided by `FeedSchedule` alone: the reconnection time (the
/// server's `retry`, or 2 s) ±25 % after a healthy stream, which never counts toward polling; 2 s, 4 s, then a minute
/// of polling for connections that never became healthy.
final class FeedScheduleTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    func testAHealthyStreamsEndWaitsTwoSecondsWithItsJitter() {
        var schedule = FeedSchedule(streaming: true, now: now)
        XCTAssertEqual(schedule.streamDropped(healthy: true, unit: 0.5, now: now), 2)
        XCTAssertEqual(schedule.streamDropped(healthy: true, unit: 0, now: now), 1.5)
        XCTAssertEqual(schedule.streamDropped(healthy: true, unit: 1, now: now), 2.5)
        // A random number out of its range is clamped: the wait never leaves 1.5…2.5 s.
        XCTAssertEqual(schedule.streamDropped(healthy: true, unit: -3, now: now), 1.5)
        XCTAssertEqual(schedule.streamDropped(healthy: true, unit: 7, now: now), 2.5)
    }

    func testTheServersRetryFieldIsTheReconnectionTime() throws {
        var schedule = FeedSchedule(streaming: true, now: now)
        schedule.serverRetry(milliseconds: 2500)
        let low = try XCTUnwrap(schedule.streamDropped(healthy: true, unit: 0, now: now))
        let middle = try XCTUnwrap(schedule.streamDropped(healthy: true, unit: 0.5, now: now))
        let high = try XCTUnwrap(schedule.streamDropped(healthy: true, unit: 0.999_999, now: now))
        XCTAssertEqual(low, 1.875, accuracy: 1e-9)
        XCTAssertEqual(middle, 2.5, accuracy: 1e-9)
        XCTAssertEqual(high, 3.125, accuracy: 1e-5)
        XCTAssertLessThan(high, 3.125)
    }

    /// Spread evenly: a thousand devices whose random numbers cover 0..<1 reconnect over 1.5…2.5 s, at most a tenth
    /// of them in any 100 ms.
    func testTheJitterSpreadsAFleetOverASecond() throws {
        var waits: [TimeInterval] = []
        for device in 0..<1000 {
            var schedule = FeedSchedule(streaming: true, now: now)
            waits.append(try XCTUnwrap(schedule.streamDropped(healthy: true, unit: Double(device) / 1000, now: now)))
        }
        XCTAssertEqual(waits.min() ?? 0, 1.5, accuracy: 1e-9)
        XCTAssertEqual(waits.max() ?? 0, 2.499, accuracy: 1e-9)
        let slices = Dictionary(grouping: waits) { Int(($0 * 10).rounded(.down)) }
        XCTAssertEqual(slices.count, 10)
        XCTAssertLessThanOrEqual(slices.values.map(\.count).max() ?? 0, 100)
    }

    func testHealthyStreamsEndingNeverLeadToPolling() {
        var schedule = FeedSchedule(streaming: true, now: now)
        for round in 0..<100 {
            XCTAssertNotNil(schedule.streamDropped(healthy: true, unit: Double(round % 10) / 10, now: now))
            XCTAssertTrue(schedule.streamDue(now: now))
        }
        XCTAssertEqual(schedule.drops, 0)
    }

    /// A connection that could not be made, or that ended before it brought anything, keeps the backoff it had:
    /// 2 s and 4 s exactly (no jitter), then polling for a minute.
    func testAStreamThatFailedToOpenKeepsItsBackoff() {
        var schedule = FeedSchedule(streaming: true, now: now)
        XCTAssertEqual(schedule.streamDropped(healthy: false, unit: 0, now: now), 2)
        XCTAssertEqual(schedule.streamDropped(healthy: false, unit: 1, now: now), 4)
        XCTAssertNil(schedule.streamDropped(healthy: false, unit: 0.5, now: now))
        XCTAssertFalse(schedule.streamDue(now: now))
        XCTAssertTrue(schedule.streamDue(now: now.addingTimeInterval(60)))
    }

    func testAHealthyStreamBetweenFailuresStartsTheCountAgain() {
        var schedule = FeedSchedule(streaming: true, now: now)
        schedule.serverRetry(milliseconds: 500)
        XCTAssertEqual(schedule.streamDropped(healthy: false, unit: 0.5, now: now), 0.5)
        XCTAssertEqual(schedule.streamDropped(healthy: false, unit: 0.5, now: now), 1)
        XCTAssertEqual(schedule.streamDropped(healthy: true, unit: 0.5, now: now), 0.5)
        XCTAssertEqual(schedule.streamDropped(healthy: false, unit: 0.5, now: now), 0.5)
        XCTAssertEqual(schedule.streamDropped(healthy: false, unit: 0.5, now: now), 1)
        XCTAssertNil(schedule.streamDropped(healthy: false, unit: 0.5, now: now))
    }
}
