import Foundation
import XCTest
@testable import ProfirestAPI

/// Pairing and refreshing against a sandbox that leaves out every member RFC 6749 5.1 and RFC 8628 3.2 make optional
/// (`omit_members`): the pairing completes, a refresh without `refresh_token` keeps the old one, and the stored state
/// says what the answers meant.
final class OptionalOAuthMembersIntegrationTests: XCTestCase {
    private var sandbox: SandboxServer!

    override func setUp() async throws {
        sandbox = try SandboxServer.start()
    }

    override func tearDown() {
        sandbox?.stop()
    }

    private func stored(_ storage: MemoryTokenStorage, _ clientID: String) throws -> StoredState {
        try StoredState.decode(try XCTUnwrap(storage.get(StateStore.defaultKey(clientID: clientID))), location: "memory")
    }

    func testPairingAndRefreshingWithEveryOptionalMemberLeftOut() async throws {
        try await sandbox.config([
            "omit_members": ["scope", "expires_in", "refresh_token", "verification_uri_complete", "interval"],
        ])
        let storage = MemoryTokenStorage()
        let api = sandbox.client(clientID: "profirest-kds", storage: storage)
        let pairing = try await api.pair(scope: "restaurants:read kitchen:read", deviceName: "KDS")
        XCTAssertEqual(pairing.state.interval, 5, "no interval in the answer: 5 s")
        XCTAssertEqual(pairing.verificationURIComplete, pairing.verificationURI)
        XCTAssertTrue(pairing.verificationURI.hasSuffix("/admin"), pairing.verificationURI)
        try await sandbox.admin("POST", "pairings/\(pairing.userCode)/approve", ["restaurant_id": "11"])
        try await pairing.connected()

        XCTAssertTrue(api.isPaired)
        XCTAssertEqual(api.scopes, ["restaurants:read", "kitchen:read"], "no scope in the answer: the requested one")
        let paired = try stored(storage, "profirest-kds")
        XCTAssertNil(paired.expiresAt, "no expires_in: the expiry is unknown")
        XCTAssertEqual(paired.tokenType, "Bearer")
        let refreshToken = try XCTUnwrap(paired.refreshToken)
        let firstAccess = try XCTUnwrap(paired.accessToken)
        _ = try await api.connection()
        let before = try await sandbox.refreshes("profirest-kds")
        XCTAssertEqual(before, 0, "an unknown expiry renews nothing ahead of time")

        // The server ends the access token: the next call is answered 401 invalid_token, refreshes once, goes through.
        try await sandbox.admin("POST", "tokens/expire", [:])
        let connection = try await api.connection()
        XCTAssertEqual(connection.restaurantId, "11")
        let once = try await sandbox.refreshes("profirest-kds")
        XCTAssertEqual(once, 1)
        let refreshed = try stored(storage, "profirest-kds")
        XCTAssertNotEqual(refreshed.accessToken, firstAccess)
        XCTAssertEqual(refreshed.refreshToken, refreshToken, "no refresh_token in the answer: the old one is kept")
        XCTAssertEqual(refreshed.scopes, ["restaurants:read", "kitchen:read"])
        XCTAssertNil(refreshed.expiresAt)

        // The kept refresh token goes on working.
        try await sandbox.admin("POST", "tokens/expire", [:])
        _ = try await api.connection()
        let twice = try await sandbox.refreshes("profirest-kds")
        XCTAssertEqual(twice, 2)
        XCTAssertEqual(try stored(storage, "profirest-kds").refreshToken, refreshToken)
    }
}
