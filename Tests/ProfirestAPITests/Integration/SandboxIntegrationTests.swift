import Foundation
import XCTest
@testable import ProfirestAPI

/// The pipeline against the real sandbox over real sockets, faults driven through its admin API.
/// One sandbox per class; each test clears the faults first.
final class SandboxIntegrationTests: XCTestCase {
    private static let server = Locked<(sandbox: SandboxServer?, token: String?)>((nil, nil))
    private var sandbox: SandboxServer!
    private var token: String!
    private let waits = Locked([TimeInterval]())

    override func setUp() async throws {
        if Self.server.withLock({ $0.sandbox }) == nil {
            let started = try SandboxServer()
            Self.server.withLock { $0.sandbox = started }
        }
        sandbox = Self.server.withLock { $0.sandbox }
        if let token = Self.server.withLock({ $0.token }) {
            self.token = token
        } else {
            let fresh = try await sandbox.deviceAccessToken()
            Self.server.withLock { $0.token = fresh }
            token = fresh
        }
        try await sandbox.raw("DELETE", "/_sandbox/faults")
    }

    override class func tearDown() {
        server.withLock { $0.sandbox }?.stop()
        server.withLock { $0 = (nil, nil) }
    }

    private func api(
        retries: Int = 3, timeout: TimeInterval = 10, language: String? = "cs", transport: (any HTTPTransport)? = nil
    ) -> ProfirestApi {
        let waits = self.waits
        return ProfirestApi(options: .init(
            baseURL: sandbox.api, accessToken: token, language: language, retries: retries, timeout: timeout,
            transport: transport, sleep: { seconds in waits.withLock { $0.append(seconds) } }))
    }

    private func punchBody(pin: String = "1234", type: String = "clock_in") -> AttendancePunchCreate {
        AttendancePunchCreate(id: ProfirestApi.uuid(), type: type, credential: StaffCredential(method: "pin", secret: pin))
    }

    private func header(_ row: [String: Any], _ name: String) -> String? {
        (row["headers"] as? [String: String])?.first { $0.key.lowercased() == name.lowercased() }?.value
    }

    func testListsWalkEveryPageWithTheCursor() async throws {
        let staff: [StaffMember] = try await api().all("/restaurants/11/staff", options: .init(query: ["limit": 2]))
        XCTAssertTrue(staff.contains { $0.name == "Jana Nováková" })
        XCTAssertGreaterThan(staff.count, 2)
        var pages = 0
        for try await page in api().pages("/restaurants/11/staff", as: StaffMemberPage.self, options: .init(query: ["limit": 2])) {
            XCTAssertLessThanOrEqual(page.data.count, 2)
            pages += 1
        }
        XCTAssertEqual(pages, (staff.count + 1) / 2)
    }

    func testAPunchWhoseAnswerIsLostIsRetriedWithTheSameKeyAndRecordedOnce() async throws {
        try await sandbox.fault(["method": "POST", "path": "/v2/restaurants/*/attendance/punches", "count": 1, "action": "drop_after"])
        let before = try await sandbox.stats()["punches_recorded"] as? Int ?? 0
        let punch: AttendancePunch = try await api().post("/restaurants/11/attendance/punches", body: punchBody())
        XCTAssertEqual(punch.employee.name, "Jana Nováková")
        let after = try await sandbox.stats()["punches_recorded"] as? Int ?? 0
        XCTAssertEqual(after - before, 1)
        let posts = try await sandbox.requests(limit: 10).filter { ($0["method"] as? String) == "POST" }.suffix(2)
        XCTAssertEqual(posts.count, 2)
        XCTAssertEqual(Set(posts.compactMap { header($0, "Idempotency-Key") }).count, 1)
        XCTAssertEqual(waits.withLock { $0 }.count, 1)
        // Sent over the wire with the token, which the sandbox's log shows redacted.
        XCTAssertEqual(posts.last.flatMap { header($0, "Authorization") }, "Bearer <redacted>")
        XCTAssertEqual(posts.last.flatMap { header($0, "Accept-Language") }, "cs")
    }

    func testServiceUnavailableWithRetryAfterIsWaitedAndRetried() async throws {
        try await sandbox.fault(["path": "/v2/restaurants/11/staff", "count": 1, "action": "status", "status": 503, "retry_after": "2"])
        let staff: [StaffMember] = try await api().all("/restaurants/11/staff")
        XCTAssertFalse(staff.isEmpty)
        XCTAssertEqual(waits.withLock { $0 }, [2])
    }

    func testRetryAfterAsAnHTTPDate() async throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = formatter.string(from: Date().addingTimeInterval(5))
        try await sandbox.fault(["path": "/v2/restaurants/11/staff", "count": 1, "action": "status", "status": 429, "retry_after": date])
        _ = try await api().all("/restaurants/11/staff", as: StaffMember.self)
        let waited = waits.withLock { $0 }
        XCTAssertEqual(waited.count, 1)
        XCTAssertTrue((3...6).contains(waited.first ?? 0), "\(waited)")
    }

    func testAnHTMLBadGatewayGivesAClearError() async throws {
        try await sandbox.fault(["path": "/v2/restaurants/11/staff", "count": 1, "action": "status", "status": 502, "problem": false])
        let e = await apiError { _ = try await self.api(retries: 0).all("/restaurants/11/staff", as: StaffMember.self) }
        XCTAssertEqual(e?.code, ErrorCode.badGateway)
        XCTAssertEqual(e?.status, 502)
    }

    func testARedirectIsNotFollowed() async throws {
        try await sandbox.fault(["path": "/v2/restaurants/11/staff", "count": 1, "action": "redirect", "location": "https://evil.example/x"])
        let e = await apiError { _ = try await self.api().all("/restaurants/11/staff", as: StaffMember.self) }
        XCTAssertEqual(e?.code, ErrorCode.unexpectedRedirect)
        XCTAssertEqual(e?.status, 307)
        XCTAssertTrue(e?.detail?.contains("https://evil.example/x") == true)
        XCTAssertEqual(waits.withLock { $0 }, [])
    }

    func testGarbageIsAnInvalidResponseNamingTheType() async throws {
        try await sandbox.fault(["path": "/v2/restaurants/11/staff", "count": 1, "action": "garbage"])
        let e = await apiError { _ = try await self.api().get("/restaurants/11/staff", as: StaffMemberPage.self) }
        XCTAssertEqual(e?.code, ErrorCode.invalidResponse)
        XCTAssertTrue(e?.detail?.contains("StaffMemberPage") == true, e?.detail ?? "")
    }

    func testDroppedAndTruncatedAnswersAreNetworkErrorsAndRetried() async throws {
        try await sandbox.fault(["path": "/v2/restaurants/11/staff", "count": 1, "action": "drop_before"])
        try await sandbox.fault(["path": "/v2/restaurants/11/staff", "count": 1, "action": "truncate"])
        let staff: [StaffMember] = try await api().all("/restaurants/11/staff")
        XCTAssertFalse(staff.isEmpty)
        XCTAssertEqual(waits.withLock { $0 }.count, 2)
        try await sandbox.fault(["path": "/v2/restaurants/11/staff", "count": 1, "action": "drop_before"])
        // A transport of its own, so the request opens a new connection: libcurl sends a request again by itself when
        // a kept-alive connection turns out dead under it, and then the caller would see the answer, not the drop.
        let e = await apiError {
            _ = try await self.api(retries: 0, transport: TransportKind.curl.make()).all("/restaurants/11/staff", as: StaffMember.self)
        }
        XCTAssertEqual(e?.code, ErrorCode.networkError)
        XCTAssertEqual(e?.status, 0)
    }

    func testASlowAnswerEndsAtTheTimeout() async throws {
        // An answer 30 s late against a 1 s timeout: far apart, so that a busy machine cannot blur them.
        try await sandbox.fault(["path": "/v2/restaurants/11/staff", "count": 1, "action": "delay", "delay_ms": 30000])
        let started = Date()
        let e = await apiError { _ = try await self.api(retries: 0, timeout: 1).all("/restaurants/11/staff", as: StaffMember.self) }
        XCTAssertEqual(e?.code, ErrorCode.timeout)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
    }

    func testConnectionsTheServerClosesRightAfterAnsweringDoNotHang() async throws {
        // The keep-alive pitfall: the sandbox answers, then closes the connection ~2 ms later, for every request.
        try await sandbox.fault(["path": "/v2/restaurants/11/staff", "count": NSNull(), "action": "close_after_response"])
        let api = api(timeout: 5)
        let started = Date()
        for _ in 0..<30 {
            _ = try await api.get("/restaurants/11/staff", as: StaffMemberPage.self)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 20)
        try await sandbox.raw("DELETE", "/_sandbox/faults")
    }

    func testStaffAmbiguousCarriesTheCandidates() async throws {
        let e = await apiError { let _: AttendancePunch = try await self.api().post("/restaurants/11/attendance/punches", body: self.punchBody(pin: "2222")) }
        XCTAssertEqual(e?.code, ErrorCode.staffAmbiguous)
        XCTAssertEqual(Set(e?.candidates.compactMap { $0["name"]?.stringValue } ?? []), ["Petr Svoboda", "Eva Dvořáková"])
        XCTAssertNotNil(e?.requestID)
        XCTAssertEqual(e?.problemModel?.code, ErrorCode.staffAmbiguous)
    }

    func testValidationErrorsInEnglish() async throws {
        let e = await apiError { try await self.api(language: "en").post("/restaurants/11/attendance/punches", body: ["id": "x", "type": "nap"]) }
        XCTAssertEqual(e?.code, ErrorCode.validationFailed)
        XCTAssertEqual(e?.status, 422)
        XCTAssertEqual(e?.title, "Invalid data")
        XCTAssertFalse(e?.errors.isEmpty ?? true)
        XCTAssertNotNil(e?.errors.first?["pointer"]?.stringValue)
    }

    func testAnInvalidTokenGoesToTheCaller() async throws {
        let api = ProfirestApi(options: .init(baseURL: sandbox.api, accessToken: "not-a-real-token-123456", sleep: { _ in }))
        let e = await apiError { try await api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.invalidToken)
        XCTAssertFalse(e?.description.contains("not-a-real-token-123456") ?? true)
    }

    func testSendGivesHeaders() async throws {
        let r = try await api().send("GET", "/restaurants/11/staff")
        XCTAssertEqual(r.status, 200)
        XCTAssertNotNil(r.header("profirest-request-id"))
        XCTAssertTrue(r.header("content-type")?.contains("json") == true)
    }
}
