import XCTest
@testable import ProfirestAPI
import ProfirestTesting

/// The staff session ends on time, by the timer on the client's clock, with no request: in virtual time
/// (`FeedClock`), where a sleep ends only when the test moves the clock past it.
final class StaffExpiryTimerTests: XCTestCase {
    private let changes = Changes()
    private lazy var clock = FeedClock(changes: changes)
    private let expired = InfoLog()

    private func sessions() -> StaffSessions {
        let (clock, changes, expired) = (clock, changes, expired)
        return StaffSessions(
            clock: { clock.now }, sleep: { try await clock.sleep($0) },
            onStaffExpired: { info in
                expired.record(info)
                changes.signal()
            })
    }

    private func session(
        idle: Int = 300, maxIn: TimeInterval = 3600, token: String = "st_jana_0123456789", employee: String = "emp_1"
    ) -> StaffSession {
        StaffSession(
            token: token, employee: StaffEmployee(id: employee, name: "Jana Nováková", role: "manager"),
            restaurantId: "11", idleTimeoutSeconds: idle, maxExpiresAt: clock.now.addingTimeInterval(maxIn))
    }

    private func at(_ seconds: TimeInterval) -> Date { FeedClock.origin.addingTimeInterval(seconds) }

    /// Until the timer sleeps exactly these waits (one per session being watched).
    private func asleep(_ waits: [TimeInterval], line: UInt = #line) async {
        await changes.until("sleeps \(waits) (under way: \(clock.pending))", line: line) {
            self.clock.pending.sorted() == waits.sorted()
        }
    }

    private func reported(_ count: Int, line: UInt = #line) async {
        await changes.until("\(count) report(s)", line: line) { self.expired.all.count >= count }
    }

    func testIdleTimeoutEndsTheSessionOnTimeWithoutARequest() async {
        let staff = sessions()
        let info = staff.begin(session(), now: clock.now)
        await clock.expectSleep(300)
        await reported(1)
        XCTAssertEqual(expired.all, [info])
        XCTAssertEqual(expired.all.first?.expiresAt, at(300))
        XCTAssertNil(staff.currentInfo)
        XCTAssertNil(staff.staffToken(now: clock.now))
        XCTAssertEqual(clock.requested, [300], "reported, the timer sleeps no more")
        XCTAssertEqual(expired.all.count, 1)
    }

    func testARequestJustBeforeTheEndMovesItByAWholeIdleTimeout() async {
        let staff = sessions()
        staff.begin(session(), now: clock.now)
        await asleep([300])
        clock.advance(299)
        staff.touch(token: "st_jana_0123456789", now: clock.now)
        clock.advance(1)  // the old end: the timer wakes, finds the new one and sleeps for the rest
        await asleep([299])
        XCTAssertTrue(expired.all.isEmpty)
        XCTAssertEqual(staff.currentInfo?.expiresAt, at(599))
        clock.advance(299)
        await reported(1)
        XCTAssertEqual(expired.all.map(\.expiresAt), [at(599)])
        XCTAssertEqual(clock.requested, [300, 299])
    }

    func testTheMaximumEndsTheSessionDespiteRequests() async {
        let staff = sessions()
        staff.begin(session(idle: 300, maxIn: 500), now: clock.now)
        await asleep([300])
        clock.advance(250)
        staff.touch(token: "st_jana_0123456789", now: clock.now)
        clock.advance(50)
        await asleep([200])  // to the maximum, not to 250 + 300
        staff.touch(token: "st_jana_0123456789", now: clock.now)
        clock.advance(200)
        await reported(1)
        XCTAssertEqual(expired.all.map(\.expiresAt), [at(500)])
        XCTAssertNil(staff.currentInfo)
        XCTAssertEqual(clock.requested, [300, 200])
    }

    func testSignOutBeforeTheEndStopsTheTimerWithoutReporting() async {
        let staff = sessions()
        staff.begin(session(), now: clock.now)
        await asleep([300])
        clock.advance(100)
        XCTAssertEqual(staff.end(), "st_jana_0123456789")
        await asleep([])  // its sleep was cancelled
        clock.advance(3600)
        XCTAssertTrue(expired.all.isEmpty)
        XCTAssertEqual(clock.requested, [300])
    }

    func testSignOutOfThatTokenStopsItsTimerToo() async {
        let staff = sessions()
        staff.begin(session(), now: clock.now)
        await asleep([300])
        staff.end(token: "st_other")  // not the current session: its timer goes on
        XCTAssertEqual(clock.pending, [300])
        staff.end(token: "st_jana_0123456789")
        await asleep([])
        clock.advance(3600)
        XCTAssertTrue(expired.all.isEmpty)
    }

    func testANewSignInReplacesTheSessionAndTheOldTimerNeverReports() async {
        let staff = sessions()
        staff.begin(session(token: "st_first_0123456789", employee: "emp_1"), now: clock.now)
        await asleep([300])
        clock.advance(100)
        staff.begin(session(token: "st_second_0123456789", employee: "emp_2"), now: clock.now)
        await asleep([300])  // the first timer's sleep cancelled, the second's until 400
        XCTAssertEqual(clock.requested, [300, 300])
        clock.advance(200)  // the first session's end passes
        XCTAssertEqual(staff.staffToken(now: clock.now), "st_second_0123456789")
        XCTAssertTrue(expired.all.isEmpty)
        clock.advance(100)
        await reported(1)
        XCTAssertEqual(expired.all.map(\.employeeID), ["emp_2"])
    }

    func testTheTimerAfterTheNextRequestNoticedTheEndReportsNothing() async {
        let staff = sessions()
        staff.begin(session(), now: clock.now)
        await asleep([300])
        // The lazy path sees the end first (a clock read by a request a moment later than the timer's).
        XCTAssertNil(staff.staffToken(now: at(300)))
        XCTAssertEqual(expired.all.count, 1)
        await asleep([])  // the lazy path stopped the timer
        clock.advance(300)
        staff.rejected(token: "st_jana_0123456789")
        XCTAssertEqual(expired.all.count, 1)
    }

    func testTheNextRequestAfterTheTimerReportedReportsNothing() async {
        let staff = sessions()
        staff.begin(session(), now: clock.now)
        await clock.expectSleep(300)
        await reported(1)
        XCTAssertNil(staff.staffToken(now: clock.now))
        XCTAssertNil(staff.info(now: clock.now))
        staff.rejected(token: "st_jana_0123456789")
        XCTAssertEqual(expired.all.count, 1)
    }

    func testAnEndAlreadyPastIsReportedAtOnce() async {
        let staff = sessions()
        staff.begin(session(maxIn: -1), now: clock.now)
        await reported(1)
        XCTAssertEqual(clock.requested, [], "no sleep for an end already past")
        XCTAssertNil(staff.currentInfo)
    }

    func testTheTimerDoesNotKeepTheSessionsAlive() async {
        var staff: StaffSessions? = sessions()
        weak let watched = staff
        staff?.begin(session(), now: clock.now)
        await asleep([300])
        staff = nil
        XCTAssertNil(watched, "the sleeping timer holds the sessions weakly")
        await asleep([])  // and it was cancelled, not left sleeping until the end
        clock.advance(3600)
        XCTAssertTrue(expired.all.isEmpty)
    }

    func testASleepThatThrowsEndsTheTimer() async {
        let (sleeps, clock, expired) = (CallRecorder<TimeInterval>(), VirtualClock(start: FeedClock.origin), expired)
        let staff = StaffSessions(
            clock: clock.function,
            sleep: { seconds in
                sleeps.record(seconds)
                throw CancellationError()
            },
            onStaffExpired: { expired.record($0) })
        staff.begin(session(), now: clock.now)
        let slept = await eventually { sleeps.all.count == 1 }
        XCTAssertTrue(slept)
        for _ in 0..<1000 { await Task.yield() }
        XCTAssertEqual(sleeps.all.count, 1, "one sleep, then the timer ended")
        // The next request still notices the end.
        clock.advance(300)
        XCTAssertNil(staff.staffToken(now: clock.now))
        XCTAssertEqual(expired.all.count, 1)
    }

    func testASleepThatReturnsAtOnceOnAStandingClockDoesNotSpin() async {
        let (sleeps, clock, expired) = (CallRecorder<TimeInterval>(), VirtualClock(start: FeedClock.origin), expired)
        let staff = StaffSessions(
            clock: clock.function, sleep: { sleeps.record($0) }, onStaffExpired: { expired.record($0) })
        staff.begin(session(), now: clock.now)
        let stalled = StaffExpiryTimer.stalledWakesAllowed
        let gaveUp = await eventually { sleeps.all.count == stalled + 1 }
        XCTAssertTrue(gaveUp)
        for _ in 0..<1000 { await Task.yield() }
        // The first wait and the ones after wakes that found the clock where it was, then the timer gave up.
        XCTAssertEqual(sleeps.all, Array(repeating: 300, count: stalled + 1))
        XCTAssertTrue(expired.all.isEmpty)
        clock.advance(300)
        XCTAssertNil(staff.staffToken(now: clock.now))
        XCTAssertEqual(expired.all.count, 1)
    }
}
