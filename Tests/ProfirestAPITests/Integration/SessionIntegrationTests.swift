import Foundation
import XCTest
@testable import ProfirestAPI

/// A paired device against the sandbox: staff sign-in (shared PIN, lockout), expiry and unpairing by the server,
/// and one refresh for a burst of requests.
final class SessionIntegrationTests: XCTestCase {
    private var sandbox: SandboxServer!

    override func setUp() async throws {
        sandbox = try SandboxServer.start()
    }

    override func tearDown() {
        sandbox?.stop()
    }

    private func pairedClient(
        _ clientID: String = "profirest-pos", onUnpaired: (@Sendable (ProfirestAPIError) -> Void)? = nil
    ) async throws -> (ProfirestApi, deviceID: String) {
        let storage = MemoryTokenStorage()
        let device = try await sandbox.pairDevice(clientID: clientID, storage: storage)
        return (sandbox.client(clientID: clientID, storage: storage, onUnpaired: onUnpaired), device.deviceID)
    }

    func testASharedPINIsAmbiguousThenTheChosenEmployeeSignsIn() async throws {
        let (api, _) = try await pairedClient()
        var credential = StaffCredential(method: "pin", secret: "2222")
        do {
            try await api.signInStaff(restaurantID: "11", credential: credential)
            XCTFail("a shared PIN signed somebody in")
        } catch let e as ProfirestAPIError where e.code == ErrorCode.staffAmbiguous {
            XCTAssertEqual(e.status, 409)
            XCTAssertEqual(e.candidates.count, 2)
            credential.employeeId = e.candidates.first?["id"]?.stringValue
            XCTAssertFalse(e.description.contains("2222"))
        }
        let session = try await api.signInStaff(restaurantID: "11", credential: credential)
        XCTAssertEqual(api.staff?.employeeID, credential.employeeId)
        XCTAssertEqual(api.staff?.restaurantID, "11")
        let current: JSONValue? = try await api.get("/staff/sessions/current", options: .init(staff: .required))
        XCTAssertEqual(current?["employee"]?["id"]?.stringValue, credential.employeeId)
        await api.signOutStaff()
        XCTAssertNil(api.staff)
        let e = await apiError { try await api.get("/staff/sessions/current", options: .init(staff: .token(session.token))) }
        XCTAssertEqual(e?.status, 401)
    }

    func testWrongPINsLockSignInsWithRetryAfter() async throws {
        try await sandbox.config(["staff_max_attempts": 3, "staff_lockout": 120])
        let (api, _) = try await pairedClient()
        for _ in 0..<3 {
            let e = await apiError { try await api.signInStaff(restaurantID: "11", credential: StaffCredential(method: "pin", secret: "0000")) }
            XCTAssertEqual(e?.code, ErrorCode.staffCredentialsInvalid)
        }
        let locked = await apiError { try await api.signInStaff(restaurantID: "11", credential: StaffCredential(method: "pin", secret: "1234")) }
        XCTAssertEqual(locked?.code, ErrorCode.staffLocked)
        XCTAssertEqual(locked?.status, 429)
        XCTAssertEqual(locked?.retryable, false)
        XCTAssertGreaterThan(locked?.retryAfter ?? 0, 100)
        XCTAssertNil(api.staff)
        // Not retried by the library: one request per call.
        let observed7 = try await sandbox.admin("GET", "stats")["requests"]?["POST /v2/restaurants/{restaurant_id}/staff/sessions"]?.intValue
        XCTAssertEqual(observed7, 4)
    }

    func testUnpairedByTheServerBecomesNotPairedAndCallsOnUnpairedOnce() async throws {
        let unpaired = CallRecorder<ProfirestAPIError>()
        let (api, deviceID) = try await pairedClient(onUnpaired: { unpaired.record($0) })
        try await api.connection()
        try await sandbox.admin("DELETE", "devices/\(deviceID)")
        let e = await apiError { try await api.get("/restaurants/11") }
        XCTAssertEqual(e?.code, ErrorCode.notPaired)
        XCTAssertFalse(api.isPaired)
        let later = await apiError { try await api.connection() }
        XCTAssertEqual(later?.code, ErrorCode.notPaired)
        XCTAssertEqual(unpaired.all.map(\.code), [ErrorCode.notPaired])
    }

    func testAnExpiredTokenIsRefreshedTransparently() async throws {
        let (api, _) = try await pairedClient("profirest-dochazka")
        try await api.connection()
        try await sandbox.admin("POST", "tokens/expire", [:])
        let connection = try await api.connection()
        XCTAssertEqual(connection.restaurantId, "11")
        let observed8 = try await sandbox.refreshes("profirest-dochazka")
        XCTAssertEqual(observed8, 1)
        let observed9 = try await sandbox.admin("GET", "stats")["refresh_reuse"]?.intValue
        XCTAssertEqual(observed9, 0)
    }

    func testARefreshWhoseAnswerIsLostIsSentAgainAndDoesNotUnpair() async throws {
        let (api, _) = try await pairedClient("profirest-dochazka")
        try await api.connection()
        try await sandbox.admin("POST", "tokens/expire", [:])
        // The server rotates the refresh token, then the connection drops before the answer leaves.
        try await sandbox.admin("POST", "faults", ["method": "POST", "path": "/oauth/token", "count": 1, "action": "drop_after"])
        let connection = try await api.connection()
        XCTAssertEqual(connection.restaurantId, "11")
        XCTAssertTrue(api.isPaired)
        let stats = try await sandbox.admin("GET", "stats")
        XCTAssertEqual(stats["refresh_replays"]?.intValue, 1, "the retry got the same new tokens")
        XCTAssertEqual(stats["refresh_reuse"]?.intValue, 0)
    }

    func testABurstOf50ConcurrentCallsOnAnExpiredTokenRefreshesOnce() async throws {
        let (api, _) = try await pairedClient("profirest-kds")
        try await sandbox.admin("POST", "tokens/expire", [:])
        let failures = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    do {
                        try await api.get("/restaurants/11")
                        return 0
                    } catch {
                        return 1
                    }
                }
            }
            return await group.reduce(0, +)
        }
        XCTAssertEqual(failures, 0)
        let observed10 = try await sandbox.refreshes("profirest-kds")
        XCTAssertEqual(observed10, 1)
        let observed11 = try await sandbox.admin("GET", "stats")["refresh_reuse"]?.intValue
        XCTAssertEqual(observed11, 0)
    }

    func testUnpairRevokesOnTheServerAndForgetsLocally() async throws {
        let (api, deviceID) = try await pairedClient()
        await api.unpair()
        XCTAssertFalse(api.isPaired)
        let devices = try await sandbox.admin("GET", "devices")["data"]?.arrayValue ?? []
        let device = devices.first { $0["id"]?.stringValue == deviceID }
        XCTAssertEqual(device?["active"]?.boolValue ?? false, false, "the revoked refresh token unpaired the device")
    }
}
