import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// What RFC 6749 5.1 and RFC 8628 3.2 make optional is read as optional: a token answer without `scope`,
/// `expires_in` or `refresh_token`, `token_type` in any letter case, a device authorization answer without
/// `verification_uri_complete` or `interval`.
final class OptionalOAuthMembersTests: XCTestCase {
    private static let scope = "restaurants:read attendance:punch"
    private let key = "profirest-api:profirest-pos"

    /// The device authorization answer with `leaving` members left out.
    private static func deviceAnswer(leaving omitted: Set<String>) -> Step {
        var body: [String: JSONValue] = [
            "device_code": "dc_secret_device_code", "user_code": "KXCB-TQPW",
            "verification_uri": "https://admin.example/zarizeni",
            "verification_uri_complete": "https://admin.example/zarizeni?code=KXCB-TQPW", "expires_in": 600,
            "interval": 3,
        ]
        for member in omitted { body[member] = nil }
        return .json(200, .object(body))
    }

    /// A token answer with `leaving` members left out.
    private static func tokenAnswer(
        _ access: String, refresh: String = "rt_paired_0123456789", tokenType: String = "Bearer",
        scope: String = "restaurants:read attendance:punch", leaving omitted: Set<String>
    ) -> Step {
        var body: [String: JSONValue] = [
            "access_token": .string(access), "token_type": .string(tokenType), "expires_in": 1800,
            "scope": .string(scope), "refresh_token": .string(refresh), "restaurant_id": "11", "device_id": "dev_7Q2M",
        ]
        for member in omitted { body[member] = nil }
        return .json(200, .object(body))
    }

    /// A transport whose device authorization and token endpoints answer from the scripts, and whose API answers the
    /// connection to `at_valid…` tokens and `401 invalid_token` to any other.
    private func transport(device: Step, tokens: [Step], valid: Set<String>) -> ScriptedTransport {
        let transport = ScriptedTransport { request in
            XCTFail("unexpected request \(request.method) \(request.url)")
            return .fail(URLError(.resourceUnavailable))
        }
        transport.route("POST", "/oauth/device_authorization", [device])
        transport.route("POST", "/oauth/token", tokens)
        transport.route("GET", "/v2/connection", otherwise: { request in
            valid.contains(request.bearer ?? "")
                ? Answers.connection
                : .problem(401, ErrorCode.invalidToken, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
        })
        return transport
    }

    private func stored(_ client: WiredClient) throws -> StoredState {
        try StoredState.decode(try XCTUnwrap(client.storage.get(key)), location: "memory")
    }

    // MARK: The device authorization answer

    func testWithoutVerificationURICompleteTheQRCodeShowsTheVerificationURI() async throws {
        let transport = transport(
            device: Self.deviceAnswer(leaving: ["verification_uri_complete"]), tokens: [], valid: [])
        let client = try WiredClient(transport: transport)
        let pairing = try await client.api.pair(scope: Self.scope, deviceName: "Píchačka")
        XCTAssertEqual(pairing.verificationURIComplete, "https://admin.example/zarizeni")
        XCTAssertEqual(pairing.verificationURI, "https://admin.example/zarizeni")
        XCTAssertEqual(pairing.state.verificationURIComplete, "https://admin.example/zarizeni")
        XCTAssertEqual(pairing.state.interval, 3, "the interval the server named")
    }

    func testWithoutIntervalThePairingPollsEveryFiveSeconds() async throws {
        let transport = transport(
            device: Self.deviceAnswer(leaving: ["interval"]),
            tokens: [Answers.oauth("authorization_pending"), Self.tokenAnswer("at_valid_1", leaving: [])],
            valid: ["at_valid_1"])
        let client = try WiredClient(transport: transport)
        let pairing = try await client.api.pair(scope: Self.scope, deviceName: "Píchačka")
        XCTAssertEqual(pairing.state.interval, 5)
        XCTAssertEqual(pairing.verificationURIComplete, "https://admin.example/zarizeni?code=KXCB-TQPW")
        client.clock.advance(4.9)
        var connected = try await pairing.poll()
        XCTAssertFalse(connected)
        XCTAssertEqual(transport.requests("POST", "/oauth/token").count, 0, "4.9 s is sooner than 5 s: nothing is sent")
        client.clock.advance(0.1)
        connected = try await pairing.poll()
        XCTAssertFalse(connected, "pending")
        XCTAssertEqual(transport.requests("POST", "/oauth/token").count, 1)
        client.clock.advance(5)
        connected = try await pairing.poll()
        XCTAssertTrue(connected)
        XCTAssertEqual(transport.requests("POST", "/oauth/token").count, 2)
    }

    func testBothLeftOutStillPairs() async throws {
        let transport = transport(
            device: Self.deviceAnswer(leaving: ["interval", "verification_uri_complete"]),
            tokens: [Self.tokenAnswer("at_valid_1", leaving: [])], valid: ["at_valid_1"])
        let client = try WiredClient(transport: transport)
        let pairing = try await client.api.pair(scope: Self.scope, deviceName: "Píchačka")
        try await pairing.connected()
        XCTAssertTrue(client.api.isPaired)
        XCTAssertEqual(client.clock.now, WiredClient.start.addingTimeInterval(5), "one wait of 5 s before the poll")
    }

    // MARK: The token answer

    func testWithoutScopeThePairingIsGrantedTheRequestedScope() async throws {
        let transport = transport(
            device: Self.deviceAnswer(leaving: []), tokens: [Self.tokenAnswer("at_valid_1", leaving: ["scope"])],
            valid: ["at_valid_1"])
        let client = try WiredClient(transport: transport)
        let pairing = try await client.api.pair(scope: "restaurants:read  attendance:punch restaurants:read", deviceName: "P")
        XCTAssertEqual(pairing.state.scope, "restaurants:read  attendance:punch restaurants:read")
        try await pairing.connected()
        XCTAssertEqual(client.api.scopes, ["restaurants:read", "attendance:punch"], "each scope once, in order")
        XCTAssertEqual(try stored(client).scopes, ["restaurants:read", "attendance:punch"])
    }

    func testWithoutScopeAResumedPairingIsGrantedTheScopeItsStateAskedFor() async throws {
        let transport = transport(
            device: Self.deviceAnswer(leaving: []), tokens: [Self.tokenAnswer("at_valid_1", leaving: ["scope"])],
            valid: ["at_valid_1"])
        let client = try WiredClient(transport: transport)
        let pairing = try await client.api.pair(scope: Self.scope, deviceName: "P")
        let saved = try JSONEncoder().encode(pairing.state)
        XCTAssertTrue(String(decoding: saved, as: UTF8.self).contains(#""scope":"restaurants:read attendance:punch""#))
        let resumed = try client.api.resumePairing(try JSONDecoder().decode(PairingState.self, from: saved))
        client.clock.advance(3)
        let connected = try await resumed.poll()
        XCTAssertTrue(connected)
        XCTAssertEqual(client.api.scopes, ["restaurants:read", "attendance:punch"])
    }

    func testAGrantedScopeThatDiffersFromTheRequestedOneIsTheOneStored() async throws {
        let transport = transport(
            device: Self.deviceAnswer(leaving: []),
            tokens: [Self.tokenAnswer("at_valid_1", scope: "restaurants:read", leaving: [])], valid: ["at_valid_1"])
        let client = try WiredClient(transport: transport)
        try await client.api.pair(scope: Self.scope, deviceName: "P").connected()
        XCTAssertEqual(client.api.scopes, ["restaurants:read"])
    }

    func testWithoutExpiresInTheTokenIsUsedUntilA401ThenRenewedOnce() async throws {
        let transport = transport(
            device: Self.deviceAnswer(leaving: []),
            tokens: [
                Self.tokenAnswer("at_old_1", leaving: ["expires_in"]),
                Self.tokenAnswer("at_valid_2", refresh: "rt_2_0123456789", leaving: ["expires_in"]),
            ],
            valid: ["at_old_1", "at_valid_2"])
        let client = try WiredClient(transport: transport)
        try await client.api.pair(scope: Self.scope, deviceName: "P").connected()
        XCTAssertNil(try stored(client).expiresAt, "the expiry is unknown, and none is made up")
        XCTAssertEqual(try stored(client).tokenType, "Bearer")
        // Days later: nothing says the token expired, so it is sent as it is, without a refresh ahead of time.
        client.clock.advance(3 * 24 * 3600)
        _ = try await client.api.connection()
        XCTAssertEqual(transport.requests("POST", "/oauth/token").count, 1, "the pairing's request only")
        XCTAssertEqual(transport.requests("GET", "/v2/connection").last?.bearer, "at_old_1")
    }

    func testWithoutExpiresInA401RenewsOnceAndTheCallSucceeds() async throws {
        let transport = transport(
            device: Self.deviceAnswer(leaving: []),
            tokens: [
                Self.tokenAnswer("at_old_1", leaving: ["expires_in"]),
                Self.tokenAnswer("at_valid_2", refresh: "rt_2_0123456789", leaving: ["expires_in"]),
            ],
            valid: ["at_valid_2"])
        let client = try WiredClient(transport: transport)
        try await client.api.pair(scope: Self.scope, deviceName: "P").connected()
        _ = try await client.api.connection()
        XCTAssertEqual(transport.requests("POST", "/oauth/token").count, 2, "the pairing, then one refresh after the 401")
        XCTAssertEqual(transport.requests("GET", "/v2/connection").map(\.bearer), ["at_old_1", "at_valid_2"])
        let state = try stored(client)
        XCTAssertEqual(state.accessToken, "at_valid_2")
        XCTAssertNil(state.expiresAt)
    }

    func testARefreshWithoutRefreshTokenOrScopeKeepsBoth() async throws {
        let transport = ScriptedTransport { request in
            XCTFail("unexpected request \(request.method) \(request.url)")
            return .fail(URLError(.resourceUnavailable))
        }
        transport.route("POST", "/oauth/token", [
            Self.tokenAnswer("at_valid_2", leaving: ["refresh_token", "scope"]),
        ])
        // Not /v2/connection: its answer's scopes would be remembered over the token answer's.
        transport.route("GET", "/v2/restaurants", otherwise: { request in
            request.bearer == "at_valid_2" ? .json(200, ["data": []]) : .problem(401, ErrorCode.invalidToken)
        })
        // Expired: the call refreshes first.
        let client = try WiredClient(transport: transport, tokens: ("at_old_0123456789", "rt_1_0123456789", -10))
        var before = try stored(client)
        before.scopes = ["restaurants:read", "kitchen:read"]
        try client.storage.set(key, try before.encoded())
        _ = try await client.api.get("/restaurants")
        let state = try stored(client)
        XCTAssertEqual(state.accessToken, "at_valid_2")
        XCTAssertEqual(state.refreshToken, "rt_1_0123456789", "the old refresh token is kept")
        XCTAssertEqual(state.scopes, ["restaurants:read", "kitchen:read"], "a refresh keeps the scopes granted before")
        XCTAssertEqual(state.expiresAt, client.clock.now.addingTimeInterval(1800))
    }

    func testTokenTypeIsComparedWithoutRegardToCase() async throws {
        for type in ["bearer", "BEARER", "Bearer", "bEaReR"] {
            let transport = transport(
                device: Self.deviceAnswer(leaving: []), tokens: [Self.tokenAnswer("at_valid_1", tokenType: type, leaving: [])],
                valid: ["at_valid_1"])
            let client = try WiredClient(transport: transport)
            try await client.api.pair(scope: Self.scope, deviceName: "P").connected()
            XCTAssertEqual(try stored(client).tokenType, "Bearer", type)
            _ = try await client.api.connection()
            XCTAssertEqual(transport.requests("GET", "/v2/connection").last?.header("Authorization"), "Bearer at_valid_1")
        }
    }

    func testATokenOfAnotherTypeIsRefusedAndNothingIsStored() async throws {
        let transport = transport(
            device: Self.deviceAnswer(leaving: []),
            tokens: [Self.tokenAnswer("at_mac_0123456789", tokenType: "mac", leaving: [])], valid: [])
        let client = try WiredClient(transport: transport)
        let pairing = try await client.api.pair(scope: Self.scope, deviceName: "P")
        client.clock.advance(3)
        let e = await apiError { _ = try await pairing.poll() }
        XCTAssertEqual(e?.code, ErrorCode.invalidResponse)
        XCTAssertTrue(e?.detail?.contains("\"mac\"") == true, e?.detail ?? "")
        XCTAssertFalse(e?.detail?.contains("at_mac_0123456789") == true)
        XCTAssertFalse(client.api.isPaired)
    }

    func testEveryOptionalMemberLeftOutAtOnce() async throws {
        let transport = transport(
            device: Self.deviceAnswer(leaving: ["interval", "verification_uri_complete"]),
            tokens: [Self.tokenAnswer("at_valid_1", tokenType: "bearer", leaving: ["scope", "expires_in"])],
            valid: ["at_valid_1"])
        let client = try WiredClient(transport: transport)
        try await client.api.pair(scope: Self.scope, deviceName: "P").connected()
        let state = try stored(client)
        XCTAssertEqual(state.accessToken, "at_valid_1")
        XCTAssertEqual(state.refreshToken, "rt_paired_0123456789")
        XCTAssertEqual(state.scopes, ["restaurants:read", "attendance:punch"])
        XCTAssertNil(state.expiresAt)
        XCTAssertEqual(state.restaurantID, "11")
    }

    // MARK: The saved pairing state

    func testAPairingStateSavedWithoutScopeOrCompleteAddressStillReads() throws {
        let json = #"{"device_code":"dc_1","user_code":"KXCB-TQPW","verification_uri":"https://a.example/z","interval":5,"expires_at":"2027-01-01T00:00:00Z"}"#
        let state = try JSONDecoder().decode(PairingState.self, from: Data(json.utf8))
        XCTAssertNil(state.scope)
        XCTAssertEqual(state.verificationURIComplete, "https://a.example/z")
        let again = try JSONDecoder().decode(PairingState.self, from: try JSONEncoder().encode(state))
        XCTAssertEqual(again, state)
    }
}
