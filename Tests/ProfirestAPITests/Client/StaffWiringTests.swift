import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// The staff session through the facade and the pipeline: required, automatic, idle extension, expiry on time and by
/// the server. The client's `sleep` waits for the test to move the clock, so the session's timer runs in virtual time.
final class StaffWiringTests: XCTestCase {
    private func client(
        _ handler: @escaping ScriptedTransport.Handler, onStaffExpired: (@Sendable (StaffInfo) -> Void)? = nil
    ) throws -> (WiredClient, ScriptedTransport) {
        let transport = ScriptedTransport(handler)
        let client = try WiredClient(
            transport: transport, tokens: ("at_valid_0123456789", "rt_1_0123456789", 86_400), onStaffExpired: onStaffExpired,
            sleeping: .untilAdvanced)
        return (client, transport)
    }

    private static let signIn: ScriptedTransport.Handler = { request in
        request.url.path == "/v2/restaurants/11/staff/sessions" ? Answers.staffSession(token: "st_jana_0123456789") : ok
    }

    func testRequiredWithoutASessionFailsAndSendsNothing() async throws {
        let (client, transport) = try client(Self.signIn)
        let e = await apiError {
            try await client.api.post("/restaurants/11/receipts", body: ["a": 1], options: .init(staff: .required))
        }
        XCTAssertEqual(e?.code, ErrorCode.staffSessionRequired)
        XCTAssertEqual(e?.status, 403)
        XCTAssertEqual(transport.requests.count, 0)
    }

    func testSignInThenAutoSendsTheStaffTokenAndSuccessExtendsTheIdleTimeout() async throws {
        let (client, transport) = try client(Self.signIn)
        let session = try await client.api.signInStaff(
            restaurantID: "11", credential: StaffCredential(method: "pin", secret: "1234"))
        XCTAssertEqual(session.employee.name, "Jana Nováková")
        let signIn = try XCTUnwrap(transport.requests.first)
        XCTAssertNil(signIn.header("Profirest-Staff-Token"), "a sign-in never carries the previous token")
        XCTAssertEqual(signIn.bearer, "at_valid_0123456789")
        XCTAssertEqual(client.api.staff?.employeeID, "emp_1")

        client.clock.advance(200)
        try await client.api.get("/restaurants/11/tabs")
        XCTAssertEqual(transport.requests.last?.header("Profirest-Staff-Token"), "st_jana_0123456789")
        // 400 s after the sign-in but 200 s after the last success: still signed in (idle is 300 s).
        client.clock.advance(200)
        XCTAssertEqual(client.api.staff?.name, "Jana Nováková")
        try await client.api.post("/restaurants/11/receipts", body: ["a": 1], options: .init(staff: .required))
        XCTAssertEqual(transport.requests.last?.header("Profirest-Staff-Token"), "st_jana_0123456789")
        // .none never sends it.
        try await client.api.get("/restaurants/11/tabs", options: .init(staff: .none))
        XCTAssertNil(transport.requests.last?.header("Profirest-Staff-Token"))
    }

    func testIdleTimeoutEndsTheSessionLocallyAndCallsOnStaffExpiredOnce() async throws {
        let expired = CallRecorder<StaffInfo>()
        let (client, transport) = try client(Self.signIn, onStaffExpired: { expired.record($0) })
        try await client.api.signInStaff(restaurantID: "11", credential: StaffCredential(method: "pin", secret: "1234"))
        client.clock.advance(301)
        // The timer (woken by the clock) and this request race to notice the end; one of them reports it.
        try await client.api.get("/restaurants/11/tabs")
        XCTAssertNil(transport.requests.last?.header("Profirest-Staff-Token"))
        XCTAssertNil(client.api.staff)
        let reported = await eventually { expired.all.count == 1 }
        XCTAssertTrue(reported)
        XCTAssertEqual(expired.all.map(\.employeeID), ["emp_1"])
    }

    func testAnIdleRegisterIsToldOnTimeWithoutARequest() async throws {
        let expired = CallRecorder<StaffInfo>()
        let (client, transport) = try client(Self.signIn, onStaffExpired: { expired.record($0) })
        try await client.api.signInStaff(restaurantID: "11", credential: StaffCredential(method: "pin", secret: "1234"))
        await client.clock.expectSleep(300)
        let reported = await eventually { expired.all.count == 1 }
        XCTAssertTrue(reported)
        XCTAssertEqual(expired.all.map(\.name), ["Jana Nováková"])
        XCTAssertEqual(expired.all.first?.expiresAt, WiredClient.start.addingTimeInterval(300))
        XCTAssertNil(client.api.staff)
        XCTAssertEqual(transport.requests.count, 1, "only the sign-in: nothing else was needed to notice the end")
        // Requests go on without the staff token, and nothing is reported again.
        try await client.api.get("/restaurants/11/tabs")
        XCTAssertNil(transport.requests.last?.header("Profirest-Staff-Token"))
        XCTAssertEqual(expired.all.count, 1)
    }

    func testARequestMovesTheEndTheTimerWaitsFor() async throws {
        let expired = CallRecorder<StaffInfo>()
        let (client, _) = try client(Self.signIn, onStaffExpired: { expired.record($0) })
        try await client.api.signInStaff(restaurantID: "11", credential: StaffCredential(method: "pin", secret: "1234"))
        await client.clock.changes.until("the timer asleep") { client.clock.pending == [300] }
        client.clock.advance(299)
        try await client.api.get("/restaurants/11/tabs")  // succeeds with the staff token: the end moves to 599
        client.clock.advance(1)
        await client.clock.changes.until("the timer asleep again") { client.clock.pending == [299] }
        XCTAssertEqual(client.api.staff?.expiresAt, WiredClient.start.addingTimeInterval(599))
        XCTAssertTrue(expired.all.isEmpty)
        client.clock.advance(299)
        let reported = await eventually { expired.all.count == 1 }
        XCTAssertTrue(reported)
        XCTAssertNil(client.api.staff)
    }

    func testSignOutStopsTheTimer() async throws {
        let expired = CallRecorder<StaffInfo>()
        let (client, _) = try client(Self.signIn, onStaffExpired: { expired.record($0) })
        try await client.api.signInStaff(restaurantID: "11", credential: StaffCredential(method: "pin", secret: "1234"))
        await client.clock.changes.until("the timer asleep") { client.clock.pending == [300] }
        await client.api.signOutStaff()
        await client.clock.changes.until("the timer stopped") { client.clock.pending.isEmpty }
        client.clock.advance(3600)
        XCTAssertTrue(expired.all.isEmpty)
        XCTAssertEqual(client.clock.requested, [300])
    }

    func testStaffSessionExpiredFromTheServerDropsTheSessionAndCallsOnStaffExpiredOnce() async throws {
        let expired = CallRecorder<StaffInfo>()
        let (client, transport) = try client({ request in
            if request.url.path == "/v2/restaurants/11/staff/sessions" { return Answers.staffSession(token: "st_jana_0123456789") }
            return request.header("Profirest-Staff-Token") != nil ? .problem(401, ErrorCode.staffSessionExpired) : ok
        }, onStaffExpired: { expired.record($0) })
        try await client.api.signInStaff(restaurantID: "11", credential: StaffCredential(method: "pin", secret: "1234"))
        let e = await apiError { try await client.api.get("/restaurants/11/tabs") }
        XCTAssertEqual(e?.code, ErrorCode.staffSessionExpired)
        XCTAssertNil(client.api.staff)
        XCTAssertEqual(expired.all.map(\.name), ["Jana Nováková"])
        // The access token was not the problem: no refresh, and the next request goes without the staff token.
        try await client.api.get("/restaurants/11/tabs")
        XCTAssertNil(transport.requests.last?.header("Profirest-Staff-Token"))
        XCTAssertEqual(transport.requests("POST", "/oauth/token").count, 0)
        XCTAssertEqual(expired.all.count, 1)
    }

    func testSignOutForgetsAtOnceAndTellsTheServerWithThatToken() async throws {
        let expired = CallRecorder<StaffInfo>()
        let (client, transport) = try client(Self.signIn, onStaffExpired: { expired.record($0) })
        try await client.api.signInStaff(restaurantID: "11", credential: StaffCredential(method: "pin", secret: "1234"))
        await client.api.signOutStaff()
        XCTAssertNil(client.api.staff)
        let signOut = try XCTUnwrap(transport.requests("DELETE", "/v2/staff/sessions/current").first)
        XCTAssertEqual(signOut.header("Profirest-Staff-Token"), "st_jana_0123456789")
        XCTAssertEqual(expired.all.count, 0, "signing out on purpose is not an expiry")
        // Nobody signed in: nothing to send.
        await client.api.signOutStaff()
        XCTAssertEqual(transport.requests("DELETE", "/v2/staff/sessions/current").count, 1)
    }

    func testTheStaffTokenAndPINNeverAppearInDescriptions() async throws {
        let (client, _) = try client(Self.signIn)
        try await client.api.signInStaff(restaurantID: "11", credential: StaffCredential(method: "pin", secret: "1234"))
        let staff = try XCTUnwrap(client.api.staff)
        var dumped = ""
        dump(staff, to: &dumped)
        for text in ["\(staff)", dumped, "\(String(reflecting: client.api.identity))"] {
            XCTAssertFalse(text.contains("st_jana_0123456789"), text)
            XCTAssertFalse(text.contains("at_valid_0123456789"), text)
        }
    }
}
