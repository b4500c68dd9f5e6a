import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// The device clock may be hours off: the server's time comes from the `Date` of its answers. Retry-After dates are
/// measured against it, a staff session lasts what the server says is left, the offset is on the client and the
/// observer hears of it once.
final class ServerClockTests: XCTestCase {
    /// The server's time in these tests.
    static let server = Date(timeIntervalSince1970: 1_800_000_000)

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// The device's clock `deviceOffset` seconds from the server's (negative: behind).
    private func client(deviceOffset: TimeInterval, _ steps: [Step], events: Locked<[ProfirestEvent]>)
        -> (ProfirestApi, SleepRecorder)
    {
        let device = Self.server.addingTimeInterval(deviceOffset)
        let transport = ScriptedTransport(steps, timer: ManualTimer())
        let sleeps = SleepRecorder()
        let api = ProfirestApi(options: .init(
            baseURL: "https://api.mujprofirest.cz", accessToken: "at_test_0123456789", transport: transport,
            clock: { device }, sleep: { try await sleeps.sleep($0) },
            observer: { event in events.withLock { $0.append(event) } }))
        return (api, sleeps)
    }

    private var dated: [String: String] { ["Date": Self.httpDate(Self.server)] }

    func testARetryAfterDateIsMeasuredFromTheAnswersDate() async throws {
        for offset in [-7200.0, 0, 7200] {
            let events = Locked<[ProfirestEvent]>([])
            let retryAt = Self.httpDate(Self.server.addingTimeInterval(3))
            let (api, sleeps) = client(deviceOffset: offset, [
                .status(503, headers: ["Date": Self.httpDate(Self.server), "Retry-After": retryAt]),
                .json(200, ["ok": true], headers: dated),
            ], events: events)
            let answer: JSONValue? = try await api.get("/connection")
            XCTAssertEqual(answer?["ok"]?.boolValue, true, "device \(offset) s off")
            XCTAssertEqual(sleeps.all, [3], "device \(offset) s off: 3 s by the server's clock")
        }
    }

    func testARetryAfterDateTooFarAheadCarriesTheServersSeconds() async throws {
        let events = Locked<[ProfirestEvent]>([])
        let (api, sleeps) = client(deviceOffset: -7200, [
            .status(503, headers: ["Date": Self.httpDate(Self.server), "Retry-After": Self.httpDate(Self.server.addingTimeInterval(45))]),
        ], events: events)
        let e = await apiError { try await api.get("/connection") }
        XCTAssertEqual(e?.retryAfter, 45, "longer than maxRetryWait (30 s): returned with the server's seconds")
        XCTAssertEqual(sleeps.all, [])
    }

    func testTheOffsetIsOnTheClientAndTheObserverHearsOfItOnce() async throws {
        for offset in [-7200.0, 7200] {
            let events = Locked<[ProfirestEvent]>([])
            let (api, _) = client(deviceOffset: offset, [
                .json(200, ["n": 1], headers: dated), .json(200, ["n": 2], headers: dated), .json(200, ["n": 3], headers: dated),
            ], events: events)
            XCTAssertNil(api.serverClockOffset, "nothing measured before an answer")
            for _ in 0..<3 { let _: JSONValue? = try await api.get("/connection") }
            XCTAssertEqual(try XCTUnwrap(api.serverClockOffset), -offset, accuracy: 0.001)
            let reports = events.withLock { $0 }.compactMap { event -> TimeInterval? in
                if case .clockOffset(let seconds) = event { return seconds }
                return nil
            }
            XCTAssertEqual(reports, [-offset], "once per client")
        }
    }

    func testAClockWithinAMinuteIsNotReported() async throws {
        let events = Locked<[ProfirestEvent]>([])
        let (api, _) = client(deviceOffset: 59, [.json(200, ["n": 1], headers: dated)], events: events)
        let _: JSONValue? = try await api.get("/connection")
        XCTAssertEqual(try XCTUnwrap(api.serverClockOffset), -59, accuracy: 0.001)
        XCTAssertFalse(events.withLock { $0 }.contains { if case .clockOffset = $0 { return true } else { return false } })
    }

    func testTheDateIsReadStrictlyInTheThreeFormsOfRFC9110() {
        let device = Self.server
        let expected = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        for form in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            XCTAssertEqual(ServerClock.date(in: ["date": form], deviceNow: Date(timeIntervalSince1970: 800_000_000)), expected, form)
        }
        for junk in ["", "yesterday", "Sun, 06 Nov 1994 08:49:37 CET", "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT",
                     "Sun, 6 Nov 94 08:49:37 GMT", String(repeating: "9", count: 200), "Sun, 06 Nov 1994 08:49:37 GMT\u{301}"] {
            XCTAssertNil(ServerClock.date(in: ["Date": junk], deviceNow: device), junk)
        }
    }

    /// `max_expires_at` is the server's time: the session lasts what is left of it at sign-in by the server's clock.
    func testAStaffSessionLastsWhatTheServerSaysIsLeftWhateverTheDeviceClockShows() async throws {
        for offset in [-7200.0, 7200] {
            let device = WiredClient.start
            let server = device.addingTimeInterval(-offset)
            let transport = ScriptedTransport { request in
                guard request.url.path == "/v2/restaurants/11/staff/sessions" else {
                    return .json(200, ["ok": true], headers: ["Date": Self.httpDate(server)])
                }
                return .json(201, [
                    "token": "st_jana_0123456789", "restaurant_id": "11", "idle_timeout_seconds": 3600,
                    "max_expires_at": .string(RFC3339.string(from: server.addingTimeInterval(600))),
                    "employee": ["id": "emp_1", "name": "Jana Nováková", "role": "manager"],
                ], headers: ["Date": Self.httpDate(server)])
            }
            let client = try WiredClient(
                transport: transport, tokens: ("at_valid_0123456789", "rt_1_0123456789", 86_400), sleeping: .untilAdvanced)
            try await client.api.signInStaff(restaurantID: "11", credential: StaffCredential(method: "pin", secret: "1234"))
            XCTAssertEqual(client.api.staff?.expiresAt, device.addingTimeInterval(600), "device \(offset) s off")
            client.clock.advance(599)
            XCTAssertNotNil(client.api.staff, "device \(offset) s off: 1 s left")
            client.clock.advance(2)
            XCTAssertNil(client.api.staff, "device \(offset) s off: ended 600 s after the sign-in")
        }
    }
}
