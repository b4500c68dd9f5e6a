import XCTest
@testable import ProfirestAPI
import ProfirestTesting

final class StaffSessionsTests: XCTestCase {
    private let clock = VirtualClock()

    /// The timer's time stands still before any end and its sleep never ends: these tests see only the lazy path
    /// (the next `staffToken`) and the server's rejection. StaffExpiryTimerTests drive the timer.
    private func sessions(onStaffExpired: (@Sendable (StaffInfo) -> Void)? = nil) -> StaffSessions {
        StaffSessions(clock: { .distantPast }, sleep: FeedClock.parkedSleep, onStaffExpired: onStaffExpired)
    }

    private func session(idle: Int = 300, maxIn: TimeInterval = 3600, token: String = "st_secret_token_1") -> StaffSession {
        StaffSession(
            token: token, employee: StaffEmployee(id: "emp_1", name: "Jana Nováková", role: "manager"),
            restaurantId: "11", idleTimeoutSeconds: idle, maxExpiresAt: clock.now.addingTimeInterval(maxIn))
    }

    func testIdleTimeoutEndsTheSession() {
        let expired = InfoLog()
        let staff = sessions(onStaffExpired: { expired.record($0) })
        let info = staff.begin(session(), now: clock.now)
        XCTAssertEqual(info, StaffInfo(employeeID: "emp_1", name: "Jana Nováková", role: "manager", restaurantID: "11",
                                       expiresAt: clock.now.addingTimeInterval(300)))
        clock.advance(299)
        XCTAssertEqual(staff.staffToken(now: clock.now), "st_secret_token_1")
        clock.advance(1)
        XCTAssertNil(staff.staffToken(now: clock.now))
        XCTAssertNil(staff.info(now: clock.now))
        XCTAssertEqual(expired.all.map(\.employeeID), ["emp_1"])
    }

    func testSuccessfulRequestExtendsTheIdleTimeout() {
        let staff = sessions()
        staff.begin(session(), now: clock.now)
        clock.advance(200)
        staff.touch(token: "st_secret_token_1", now: clock.now)
        clock.advance(200)  // 400 s after sign-in, 200 s after the last request
        XCTAssertEqual(staff.staffToken(now: clock.now), "st_secret_token_1")
        XCTAssertEqual(staff.info(now: clock.now)?.expiresAt, clock.now.addingTimeInterval(100))
        clock.advance(100)
        XCTAssertNil(staff.staffToken(now: clock.now))
    }

    func testRequestOfAnEarlierSessionExtendsNothing() {
        let staff = sessions()
        staff.begin(session(token: "st_first_session"), now: clock.now)
        staff.begin(session(token: "st_second_session"), now: clock.now)
        clock.advance(200)
        staff.touch(token: "st_first_session", now: clock.now)
        clock.advance(100)
        XCTAssertNil(staff.staffToken(now: clock.now))
    }

    func testMaximumWinsOverActivity() {
        let staff = sessions()
        staff.begin(session(idle: 300, maxIn: 500), now: clock.now)
        clock.advance(250)
        staff.touch(token: "st_secret_token_1", now: clock.now)
        XCTAssertEqual(staff.info(now: clock.now)?.expiresAt, clock.now.addingTimeInterval(250))
        clock.advance(250)
        XCTAssertNil(staff.staffToken(now: clock.now))
    }

    func testOnStaffExpiredFiresOnce() {
        let expired = InfoLog()
        let staff = sessions(onStaffExpired: { expired.record($0) })
        staff.begin(session(), now: clock.now)
        clock.advance(301)
        for _ in 0..<5 { XCTAssertNil(staff.staffToken(now: clock.now)) }
        XCTAssertNil(staff.info(now: clock.now))
        staff.rejected(token: "st_secret_token_1")
        XCTAssertEqual(expired.all.count, 1)
    }

    func testServerRejectionEndsTheSessionOnce() {
        let expired = InfoLog()
        let staff = sessions(onStaffExpired: { expired.record($0) })
        staff.begin(session(), now: clock.now)
        staff.rejected(token: "st_other")  // not ours: ignored
        XCTAssertNotNil(staff.staffToken(now: clock.now))
        staff.rejected(token: "st_secret_token_1")
        staff.rejected(token: "st_secret_token_1")
        XCTAssertNil(staff.staffToken(now: clock.now))
        XCTAssertEqual(expired.all.count, 1)
    }

    func testSignOutReturnsTheTokenWithoutExpiryCallback() {
        let expired = InfoLog()
        let staff = sessions(onStaffExpired: { expired.record($0) })
        staff.begin(session(), now: clock.now)
        XCTAssertEqual(staff.end(), "st_secret_token_1")
        XCTAssertNil(staff.end())
        XCTAssertNil(staff.staffToken(now: clock.now))
        XCTAssertTrue(expired.all.isEmpty)
    }

    func testTokenIsNeverWrittenToStorageNorShown() throws {
        let storage = MemoryTokenStorage()
        let store = StateStore(storage: storage, key: "profirest-api:profirest-pos")
        try store.update { $0.accessToken = "at_device" }
        let staff = sessions()
        let info = staff.begin(session(), now: clock.now)
        try store.update { $0.restaurantID = "11" }
        let document = try XCTUnwrap(storage.get("profirest-api:profirest-pos"))
        XCTAssertFalse(document.contains("st_secret_token_1"))
        var dumped = ""
        dump(info, to: &dumped)
        XCTAssertFalse(dumped.contains("st_secret_token_1"))
        XCTAssertFalse(String(describing: info).contains("st_secret_token_1"))
    }
}
