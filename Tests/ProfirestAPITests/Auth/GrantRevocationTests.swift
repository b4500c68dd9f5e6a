import XCTest
@testable import ProfirestAPI
import ProfirestTesting

/// A grant ends when the app says so: unpairing, disconnecting, and connecting or pairing again revoke the grant
/// given up, with retries; what the server did not confirm stays in `pending_revocations` for the next occasion.
final class GrantRevocationTests: XCTestCase {
    private let clock = VirtualClock()
    private let key = StateStore.defaultKey(clientID: "profirest-pos")

    private struct Setup {
        let identity: IdentityFixture
        let store: StateStore
        let endpoint: ScriptedEndpoint
        let sleeps: SleepRecorder
        let events: Locked<[ProfirestEvent]>

        var revocationFailures: [String] {
            events.withLock { $0 }.compactMap { if case .revocationFailed(let code) = $0 { return code } else { return nil } }
        }
    }

    /// An identity paired with `rt_1`; sleeps are recorded and return at once, the jitter is pinned to none.
    private func paired(refreshToken: String? = "rt_1", pending: [String] = []) throws -> Setup {
        let endpoint = ScriptedEndpoint()
        endpoint.metadataAnswer = AuthorizationServerMetadata(
            issuer: "https://api.example", authorizationEndpoint: "https://api.example/oauth/authorize",
            tokenEndpoint: "https://api.example/oauth/token",
            deviceAuthorizationEndpoint: "https://api.example/oauth/device_authorization",
            revocationEndpoint: "https://api.example/oauth/revoke", responseTypesSupported: ["code"],
            grantTypesSupported: ["authorization_code"], codeChallengeMethodsSupported: ["S256"],
            authorizationResponseIssParameterSupported: true)
        let store = StateStore(storage: MemoryTokenStorage(), key: key)
        let expiry = clock.now.addingTimeInterval(1800)
        try store.update {
            $0.accessToken = refreshToken == nil ? nil : "at_1"
            $0.refreshToken = refreshToken
            $0.expiresAt = expiry
            $0.pendingRevocations = pending
        }
        let sleeps = SleepRecorder()
        let events = Locked([ProfirestEvent]())
        let identity = IdentityFixture(
            store: store, endpoint: endpoint, clientID: "profirest-pos", baseURL: URL(string: "https://api.example")!,
            clock: clock.function, sleep: { try await sleeps.sleep($0) },
            observe: { event in events.withLock { $0.append(event) } },
            retries: 3, retry: RetrySchedule(retryDelay: 1, maxRetryWait: 30, random: { 0.5 }))
        return Setup(identity: identity, store: store, endpoint: endpoint, sleeps: sleeps, events: events)
    }

    /// Starts a consent and completes it with a code the endpoint answers with `at_2`/`rt_2`.
    private func connectAgain(_ s: Setup) async throws {
        s.endpoint.setScript([.tokens(.sample("at_2", refresh: "rt_2"))])
        let url = try s.identity.authorizationURL(redirectURI: "app://cb", scope: "orders:read", prompt: nil)
        let state = try XCTUnwrap(
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "state" }?.value)
        try await s.identity.completeAuthorization(parameters: ["code": "c", "state": state, "iss": "https://api.example"])
    }

    // MARK: Connecting or pairing again

    func testConnectingAgainRevokesTheReplacedGrant() async throws {
        let s = try paired()
        try await connectAgain(s)
        XCTAssertEqual(s.endpoint.revokedTokens, ["rt_1"])
        XCTAssertEqual(s.endpoint.revoked.first?["token_type_hint"], "refresh_token")
        let state = try s.store.read()
        XCTAssertEqual(state.refreshToken, "rt_2")
        XCTAssertEqual(state.pendingRevocations, [])
    }

    func testConnectingAgainWhileTheServerIsDownKeepsTheReplacedGrantPending() async throws {
        let s = try paired()
        s.endpoint.setRevokeScript([ProfirestAPIError.unavailable()])
        try await connectAgain(s)  // connecting succeeds: the old grant's end is best effort
        XCTAssertEqual(s.endpoint.revokedTokens, ["rt_1", "rt_1", "rt_1", "rt_1"])
        XCTAssertEqual(s.sleeps.all, [1, 2, 4])
        XCTAssertEqual(try s.store.read().pendingRevocations, ["rt_1"])
        XCTAssertEqual(try s.store.read().accessToken, "at_2")
        XCTAssertEqual(s.revocationFailures, ["service_unavailable"])
    }

    func testPairingAgainRevokesTheReplacedGrant() async throws {
        let s = try paired()
        s.endpoint.deviceAnswer = DeviceAuthorization(
            deviceCode: "dc_secret", userCode: "KXCB-TQPW", verificationUri: "https://admin.example/zarizeni",
            expiresIn: 600, interval: 5, verificationUriComplete: "")
        s.endpoint.setScript([.tokens(.sample("at_2", refresh: "rt_2"))])
        let pairing = try await s.identity.pair(scope: "a", deviceName: nil, devicePlatform: nil, appVersion: nil)
        clock.advance(5)
        let connected = try await pairing.poll()
        XCTAssertTrue(connected)
        XCTAssertEqual(s.endpoint.revokedTokens, ["rt_1"])
        XCTAssertEqual(try s.store.read().refreshToken, "rt_2")
    }

    // MARK: unpair and disconnect

    func testUnpairWithA503RevokeRetriesThenKeepsItPendingAndTellsTheObserver() async throws {
        let s = try paired()
        s.endpoint.setRevokeScript([ProfirestAPIError.unavailable()])
        do {
            try await s.identity.unpair()
            XCTFail("the failed revocation must reach the caller that asks for it")
        } catch let e as ProfirestAPIError {
            XCTAssertEqual(e.status, 503)
        }
        XCTAssertEqual(s.endpoint.revokedTokens, ["rt_1", "rt_1", "rt_1", "rt_1"], "the first try and 3 retries")
        XCTAssertEqual(s.sleeps.all, [1, 2, 4], "the doubling backoff from retryDelay")
        let state = try s.store.read()
        XCTAssertFalse(state.hasTokens, "the local state is cleared either way")
        XCTAssertEqual(state.pendingRevocations, ["rt_1"])
        XCTAssertEqual(s.revocationFailures, ["service_unavailable"])
        XCTAssertEqual(s.events.withLock { $0 }.first, .unpaired(reason: "requested"))
    }

    func testRetryAfterWinsOverTheBackoff() async throws {
        let s = try paired()
        s.endpoint.setRevokeScript([ProfirestAPIError.unavailable(retryAfter: 7), nil])
        try await s.identity.unpair()
        XCTAssertEqual(s.sleeps.all, [7])
        XCTAssertEqual(try s.store.read().pendingRevocations, [])
        XCTAssertEqual(s.revocationFailures, [])
    }

    func testALaterUnpairRevokesThePendingGrant() async throws {
        let s = try paired()
        s.endpoint.setRevokeScript([ProfirestAPIError.unavailable()])
        try? await s.identity.unpair()
        s.endpoint.setRevokeScript([nil])
        try await s.identity.unpair()  // nothing paired now: only the pending grant is left to end
        XCTAssertEqual(s.endpoint.revokedTokens.last, "rt_1")
        XCTAssertEqual(try s.store.read().pendingRevocations, [])
        XCTAssertNil(try s.store.storage.get(key), "nothing left worth keeping")
    }

    func testAPendingGrantIsTriedOnceWhenTheNextOneIsRevoked() async throws {
        let s = try paired(refreshToken: "rt_0", pending: ["rt_1"])
        try await connectAgain(s)
        XCTAssertEqual(s.endpoint.revokedTokens, ["rt_0", "rt_1"], "the replaced grant first, then the older one")
        XCTAssertEqual(try s.store.read().pendingRevocations, [])
    }

    func testAnUnreachableServerIsNotAskedAboutTheOlderGrants() async throws {
        let s = try paired(refreshToken: "rt_3", pending: ["rt_1", "rt_2"])
        s.endpoint.setRevokeScript([ProfirestAPIError(code: ErrorCode.networkError, status: 0, title: "offline", retryable: true)])
        try? await s.identity.unpair()
        XCTAssertEqual(s.endpoint.revokedTokens, ["rt_3", "rt_3", "rt_3", "rt_3"])
        XCTAssertEqual(try s.store.read().pendingRevocations, ["rt_1", "rt_2", "rt_3"])
        XCTAssertEqual(s.revocationFailures, [ErrorCode.networkError])
    }

    func testAnUnknownTokenCountsAsRevoked() async throws {
        let s = try paired()
        s.endpoint.setRevokeScript([ProfirestOAuthError(error: "invalid_token")])
        try await s.identity.unpair()
        XCTAssertEqual(s.endpoint.revokedTokens, ["rt_1"])
        XCTAssertEqual(try s.store.read().pendingRevocations, [])
        XCTAssertEqual(s.revocationFailures, [])
    }

    func testAnOAuthRefusalIsNotRetriedAndStaysPending() async throws {
        let s = try paired()
        s.endpoint.setRevokeScript([ProfirestOAuthError(error: "invalid_client")])
        do {
            try await s.identity.unpair()
            XCTFail("expected invalid_client")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "invalid_client")
        }
        XCTAssertEqual(s.endpoint.revokedTokens, ["rt_1"])
        XCTAssertEqual(try s.store.read().pendingRevocations, ["rt_1"])
    }

    func testUnpairWithoutRevokeParksNothing() async throws {
        let s = try paired()
        try await s.identity.unpair(revoke: false)
        XCTAssertEqual(s.endpoint.revokedTokens, [])
        XCTAssertNil(try s.store.storage.get(key))
    }

    // MARK: The state document

    func testPendingRevocationsRoundTripAndSurviveForgettingTheConnection() throws {
        var state = StoredState()
        state.refreshToken = "rt_2"
        state.pendingRevocations = ["rt_1"]
        XCTAssertEqual(state.parkRefreshToken(), "rt_2")
        state.forgetConnection()
        let json = try state.encoded()
        XCTAssertTrue(json.contains(#""pending_revocations":["rt_1","rt_2"]"#), json)
        XCTAssertEqual(try StoredState.decode(json, location: "test"), state)
        XCTAssertThrowsError(try StoredState.decode(#"{"pending_revocations":"rt_1"}"#, location: "test"))
    }

    func testPendingRevocationsAreBounded() {
        var state = StoredState()
        for n in 0..<(StoredState.pendingRevocationLimit + 5) {
            state.refreshToken = "rt_\(n)"
            state.parkRefreshToken()
        }
        XCTAssertEqual(state.pendingRevocations.count, StoredState.pendingRevocationLimit)
        XCTAssertEqual(state.pendingRevocations.last, "rt_\(StoredState.pendingRevocationLimit + 4)")
    }

    func testNotPairedNamesBothWaysBack() {
        let text = AuthFailure.notPaired.description
        XCTAssertTrue(text.contains("pair the device again"), text)
        XCTAssertTrue(text.contains("connect the partner application again with authorizationURL"), text)
    }
}
