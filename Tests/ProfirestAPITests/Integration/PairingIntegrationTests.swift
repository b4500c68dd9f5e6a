import Foundation
import XCTest
@testable import ProfirestAPI

/// Device pairing (RFC 8628) against the sandbox over real sockets, decided through its admin API.
final class PairingIntegrationTests: XCTestCase {
    private var sandbox: SandboxServer!

    override func setUp() async throws {
        sandbox = try SandboxServer.start()
        // Whole seconds are the smallest interval RFC 8628 has.
        try await sandbox.config(["poll_interval": 1])
    }

    override func tearDown() {
        sandbox?.stop()
    }

    private func devicePolls() async -> Int {
        (try? await sandbox.admin("GET", "stats")["device_polls"]?.intValue) ?? 0
    }

    func testPendingThenApprovedConnectsAndStoresTheDevice() async throws {
        let api = sandbox.client(clientID: "profirest-kds")
        XCTAssertFalse(api.isPaired)
        let pairing = try await api.pair(scope: "restaurants:read kitchen:read", deviceName: "KDS", appVersion: "2.3.0")
        let observed1 = try await sandbox.pendingCodes()
        XCTAssertEqual(observed1, [pairing.userCode])
        XCTAssertTrue(pairing.verificationURIComplete.contains(pairing.userCode))
        let waiting = Task { try await pairing.connected() }
        let polled = await waitUntil(30) { await self.devicePolls() >= 1 }
        XCTAssertTrue(polled, "the library polled while the code was pending")
        try await sandbox.admin("POST", "pairings/\(pairing.userCode)/approve", ["restaurant_id": "11"])
        try await waiting.value
        XCTAssertTrue(api.isPaired)
        XCTAssertEqual(api.restaurantID, "11")
        XCTAssertNotNil(api.deviceID)
        XCTAssertEqual(Set(api.scopes), ["restaurants:read", "kitchen:read"])
        let connection = try await api.connection()
        XCTAssertEqual(connection.kind, "device")
        XCTAssertEqual(connection.device?.id, api.deviceID)
    }

    func testSlowDownMakesThePairingPollFiveSecondsSlower() async throws {
        // 4 s: the two polls "back to back" must come within the interval also when a busy machine (load 6, 2 cores)
        // makes each take a second.
        try await sandbox.config(["poll_interval": 4, "slow_down_increment": 1])
        let api = sandbox.client(clientID: "profirest-pos")
        let pairing = try await api.pair(scope: "restaurants:read", deviceName: "Pokladna")
        // Resumed pairings have no previous poll of their own, so two of them poll the same code back to back.
        let first = try api.resumePairing(pairing.state)
        let pending = try await first.poll()
        XCTAssertFalse(pending)
        let second = try api.resumePairing(pairing.state)
        let slowed = try await second.poll()
        XCTAssertFalse(slowed)
        XCTAssertEqual(second.state.interval, pairing.state.interval + 5)
        let observed2 = try await sandbox.admin("GET", "stats")["slow_downs"]?.intValue
        XCTAssertEqual(observed2, 1)
        // A poll sooner than the grown interval is not even sent.
        let early = try await second.poll()
        XCTAssertFalse(early)
        let observed3 = await devicePolls()
        XCTAssertEqual(observed3, 2)
        // After the server's (grown) interval a saved state continues and connects.
        try await sandbox.admin("POST", "pairings/\(pairing.userCode)/approve", ["restaurant_id": "11"])
        try await Task.sleep(nanoseconds: 5_200_000_000)
        let connected = try await api.resumePairing(second.state).poll()
        XCTAssertTrue(connected)
        XCTAssertTrue(api.isPaired)
    }

    func testADeniedCodeIsAccessDenied() async throws {
        let api = sandbox.client(clientID: "profirest-dochazka")
        let pairing = try await api.pair(scope: "attendance:punch", deviceName: "Píchačka")
        try await sandbox.admin("POST", "pairings/\(pairing.userCode)/deny")
        do {
            try await pairing.connected()
            XCTFail("a denied pairing connected")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "access_denied")
        }
        XCTAssertFalse(api.isPaired)
    }

    func testAnExpiredCodeIsExpiredToken() async throws {
        try await sandbox.config(["device_code_ttl": 2])
        let api = sandbox.client(clientID: "profirest-kuryr")
        let pairing = try await api.pair(scope: "deliveries:read", deviceName: "Kurýr")
        do {
            try await pairing.connected()
            XCTFail("an expired pairing connected")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "expired_token")
            XCTAssertFalse(e.message.contains(pairing.state.deviceCode))
        }
        XCTAssertFalse(api.isPaired)
    }

    func testAnOutageMidPollIsWaitedOut() async throws {
        // A dropped connection is noticed at once (CurlTransport); the timeout stays long, because the poll that
        // gets the tokens must not time out on a busy machine: the server has then spent the device code, and the
        // next poll is invalid_grant (this test once failed that way at load 6 with a 2 s timeout).
        let api = sandbox.client(clientID: "profirest-kds", timeout: 30)
        let pairing = try await api.pair(scope: "kitchen:read", deviceName: "KDS")
        try await sandbox.admin("POST", "faults", ["method": "POST", "path": "/oauth/token", "count": 1, "action": "status", "status": 503])
        try await sandbox.admin("POST", "faults", ["method": "POST", "path": "/oauth/token", "count": 1, "action": "drop_before"])
        try await sandbox.admin("POST", "pairings/\(pairing.userCode)/approve", ["restaurant_id": "11"])
        try await pairing.connected()
        XCTAssertTrue(api.isPaired)
        let observed4 = try await sandbox.admin("GET", "stats")["faults_triggered"]?.intValue
        XCTAssertEqual(observed4, 2)
    }

    func testCancellingTheWaitingTaskStopsPolling() async throws {
        let api = sandbox.client(clientID: "profirest-kds")
        let pairing = try await api.pair(scope: "kitchen:read", deviceName: "KDS")
        let waiting = Task { try await pairing.connected() }
        _ = await waitUntil(30) { await self.devicePolls() >= 1 }
        waiting.cancel()
        do {
            try await waiting.value
            XCTFail("a cancelled pairing finished")
        } catch is CancellationError {}
        let polls = await devicePolls()
        try await Task.sleep(nanoseconds: 1_500_000_000)
        let observed5 = await devicePolls()
        XCTAssertEqual(observed5, polls, "no polls after the cancel")
    }
}
