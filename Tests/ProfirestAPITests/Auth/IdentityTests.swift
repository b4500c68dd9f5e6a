import XCTest
@testable import ProfirestAPI
import ProfirestTesting

final class IdentityTests: XCTestCase {
    private let clock = VirtualClock()

    /// `time`: a clock whose sleeps wait for the test; without it, sleeping moves `clock` on at once.
    private func identity(
        _ endpoint: ScriptedEndpoint, storage: any TokenStorage = MemoryTokenStorage(), fixed: String? = nil,
        onUnpaired: (@Sendable () -> Void)? = nil, time: FeedClock? = nil
    ) -> IdentityFixture {
        endpoint.deviceAnswer = DeviceAuthorization(
            deviceCode: "dc_secret", userCode: "KXCB-TQPW", verificationUri: "https://admin.example/zarizeni",
            expiresIn: 600, interval: 5, verificationUriComplete: "")
        let clock = self.clock
        var now: @Sendable () -> Date = clock.function
        var sleep: @Sendable (TimeInterval) async throws -> Void = { seconds in clock.advance(seconds) }
        if let time {
            now = { time.now }
            sleep = { try await time.sleep($0) }
        }
        return IdentityFixture(
            store: StateStore(storage: storage, key: StateStore.defaultKey(clientID: "profirest-pos")),
            endpoint: endpoint, clientID: "profirest-pos", clock: now, sleep: sleep, fixedAccessToken: fixed,
            onUnpaired: onUnpaired)
    }

    func testPairingMakesTheSynchronousStateReadable() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_1", refresh: "rt_1"))])
        let storage = MemoryTokenStorage()
        let id = identity(endpoint, storage: storage)
        XCTAssertFalse(id.isPaired)
        XCTAssertNil(id.restaurantID)
        let pairing = try await id.pair(scope: "restaurants:read", deviceName: "Pokladna", devicePlatform: nil, appVersion: nil)
        XCTAssertEqual(pairing.verificationURIComplete, "https://admin.example/zarizeni")  // falls back to the plain URI
        try await pairing.connected()
        XCTAssertTrue(id.isPaired)
        XCTAssertEqual(id.restaurantID, "11")
        XCTAssertEqual(id.deviceID, "dev_7Q2M")
        XCTAssertEqual(id.scopes, ["restaurants:read", "attendance:punch"])
        XCTAssertNotNil(try storage.get("profirest-api:profirest-pos"))
        let token = try await id.accessToken()
        XCTAssertEqual(token, "at_1")
        // One device authorization and one token request: the fresh token needed no refresh.
        XCTAssertEqual(endpoint.allForms.filter { $0["grant_type"] != nil }.count, 1)
    }

    func testConnectionAnswerIsRememberedButNotAfterUnpair() async throws {
        let endpoint = ScriptedEndpoint([.tokens(TokenResponse(accessToken: "at_1", tokenType: "Bearer", expiresIn: 1800, scope: ""))])
        let id = identity(endpoint)
        let pairing = try await id.pair(scope: "restaurants:read", deviceName: nil, devicePlatform: nil, appVersion: nil)
        try await pairing.connected()
        XCTAssertNil(id.restaurantID)
        let connection = Connection(
            clientId: "profirest-pos", kind: "device", restaurantId: "11", restaurants: [], scopes: ["restaurants:read"],
            device: nil)
        try await id.remember(connection)
        XCTAssertEqual(id.restaurantID, "11")
        XCTAssertEqual(id.scopes, ["restaurants:read"])
        try await id.unpair(revoke: false)
        try await id.remember(connection)
        XCTAssertFalse(id.isPaired)
        XCTAssertNil(id.restaurantID)
    }

    func testUnpairEndsTheStaffSessionAndForgetsTheConnection() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_1", refresh: "rt_1"))])
        // Time moves only when the test says: a sleep that moved the clock on at once would let the staff
        // session's timer end the session right after the sign-in.
        let time = FeedClock(changes: Changes(), origin: clock.now)
        let id = identity(endpoint, time: time)
        let pairing = try await id.pair(scope: "a", deviceName: nil, devicePlatform: nil, appVersion: nil)
        async let connected: Void = pairing.connected()
        await time.expectSleep(5)  // the pairing's first poll
        try await connected
        id.staffSignedIn(StaffSession(
            token: "st_1", employee: StaffEmployee(id: "emp_1", name: "Jana", role: "manager"), restaurantId: "11",
            idleTimeoutSeconds: 300, maxExpiresAt: time.now.addingTimeInterval(3600)))
        XCTAssertEqual(id.staff?.employeeID, "emp_1")
        XCTAssertEqual(id.staffToken(), "st_1")
        try await id.unpair()
        XCTAssertNil(id.staff)
        XCTAssertNil(id.staffToken())
        XCTAssertFalse(id.isPaired)
        XCTAssertEqual(endpoint.revoked.first?["token"], "rt_1")
        do {
            _ = try await id.accessToken()
            XCTFail("expected not paired")
        } catch { XCTAssertEqual(error as? AuthFailure, .notPaired) }
    }

    func testStaffSeamExtendsAndRejects() {
        let expired = InfoLog()
        let endpoint = ScriptedEndpoint()
        endpoint.deviceAnswer = nil
        let clock = self.clock
        let id = IdentityFixture(
            store: StateStore(storage: MemoryTokenStorage(), key: "k"), endpoint: endpoint, clientID: "profirest-pos",
            clock: clock.function, sleep: FeedClock.parkedSleep, onStaffExpired: { expired.record($0) })
        id.staffSignedIn(StaffSession(
            token: "st_1", employee: StaffEmployee(id: "emp_1", name: "Jana", role: "manager"), restaurantId: "11",
            idleTimeoutSeconds: 300, maxExpiresAt: clock.now.addingTimeInterval(3600)))
        clock.advance(250)
        id.staffRequestSucceeded(token: "st_1")
        clock.advance(250)
        XCTAssertEqual(id.staffToken(), "st_1")
        id.staffRejected(token: "st_1")
        XCTAssertNil(id.staffToken())
        XCTAssertEqual(expired.all.count, 1)
        XCTAssertNil(id.staffSignedOut())
    }

    func testFixedTokenCountsAsPaired() async throws {
        let id = identity(ScriptedEndpoint(), fixed: "at_fixed")
        XCTAssertTrue(id.isPaired)
        let token = try await id.accessToken()
        XCTAssertEqual(token, "at_fixed")
    }

    func testCorruptStateIsReportedByTheTokenPath() async throws {
        let storage = MemoryTokenStorage()
        try storage.set("profirest-api:profirest-pos", "not json at_secret")
        let id = identity(ScriptedEndpoint(), storage: storage)
        // Unknown is not unpaired: an app that pairs when isPaired is false must not start over a document it
        // cannot read (the pairing would then fail with the same error anyway).
        XCTAssertTrue(id.isPaired)
        do {
            _ = try await id.accessToken()
            XCTFail("expected a storage error")
        } catch let e as StorageError {
            XCTAssertEqual(e.kind, .corrupt)
            XCTAssertFalse(e.description.contains("at_secret"))
        }
    }
}

final class IdentityRedactionTests: XCTestCase {
    func testNoSecretInDescriptionsOrDumps() async throws {
        // Time moves only when the test says, so the staff session's timer leaves the session to be dumped.
        let clock = FeedClock(changes: Changes())
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_secret_access", refresh: "rt_secret_refresh"))])
        endpoint.deviceAnswer = DeviceAuthorization(
            deviceCode: "dc_secret_device", userCode: "KXCB-TQPW", verificationUri: "https://admin.example/z",
            expiresIn: 600, interval: 5, verificationUriComplete: "https://admin.example/z?code=KXCB-TQPW")
        let store = StateStore(storage: MemoryTokenStorage(), key: "profirest-api:moje-aplikace")
        let id = IdentityFixture(
            store: store, endpoint: endpoint, clientID: "moje-aplikace", clientSecret: "cs_secret_client",
            clock: { clock.now }, sleep: { try await clock.sleep($0) })
        let pairing = try await id.pair(scope: "a", deviceName: nil, devicePlatform: nil, appVersion: nil)
        async let connected: Void = pairing.connected()
        await clock.expectSleep(5)  // the pairing's first poll
        try await connected
        _ = try id.authorizationURL(redirectURI: "app://cb", scope: "a", prompt: nil)
        id.staffSignedIn(StaffSession(
            token: "st_secret_staff", employee: StaffEmployee(id: "emp_1", name: "Jana", role: "manager"),
            restaurantId: "11", idleTimeoutSeconds: 300, maxExpiresAt: clock.now.addingTimeInterval(3600)))
        XCTAssertEqual(id.staffSessions.currentInfo?.employeeID, "emp_1", "the session is there to be dumped")
        let state = try store.read()
        let verifier = try XCTUnwrap(state.pendingConsent?.codeVerifier)
        let fixed = Identity(fixedAccessToken: "at_secret_fixed")
        let core = id.core

        var texts = [String(describing: state), String(reflecting: state), "\(pairing)", String(describing: core)]
        for subject in [state as Any, pairing, id.identity, fixed, core, store, id.staffSessions] {
            var out = ""
            dump(subject, to: &out)
            texts.append(out)
        }
        for text in texts {
            for secret in ["at_secret_access", "rt_secret_refresh", "dc_secret_device", "cs_secret_client",
                           "st_secret_staff", "at_secret_fixed", verifier] {
                XCTAssertFalse(text.contains(secret), "\(secret) leaked in: \(text)")
            }
        }
        XCTAssertTrue(texts.joined().contains("KXCB-TQPW"))
    }
}

extension IdentityFixture {
    func staffSignedOut() -> String? { signOutStaff(token: nil) }
}
