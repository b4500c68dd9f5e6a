import XCTest
@testable import ProfirestAPI
import ProfirestTesting

final class PartnerAuthorizationTests: XCTestCase {
    private let key = "profirest-api:moje-aplikace"
    private let clock = VirtualClock()

    private func metadata(issParameter: Bool = true) -> AuthorizationServerMetadata {
        AuthorizationServerMetadata(
            issuer: "https://api.example", authorizationEndpoint: "https://api.example/oauth/authorize",
            tokenEndpoint: "https://api.example/oauth/token",
            deviceAuthorizationEndpoint: "https://api.example/oauth/device_authorization",
            revocationEndpoint: "https://api.example/oauth/revoke", responseTypesSupported: ["code"],
            grantTypesSupported: ["authorization_code"], codeChallengeMethodsSupported: ["S256"],
            authorizationResponseIssParameterSupported: issParameter)
    }

    private func partner(
        _ endpoint: ScriptedEndpoint, storage: any TokenStorage = MemoryTokenStorage(), key: String? = nil,
        clientID: String? = "moje-aplikace", secret: String? = nil
    ) -> PartnerAuthorization {
        endpoint.metadataAnswer = endpoint.metadataAnswer ?? metadata()
        return PartnerAuthorization(
            core: identityCore(
                store: StateStore(storage: storage, key: key ?? self.key), endpoint: endpoint, clientID: clientID,
                clientSecret: secret, baseURL: URL(string: "https://api.example/")!, clock: clock.function))
    }

    private func query(_ url: URL) -> [String: String] {
        var out: [String: String] = [:]
        for item in URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? [] {
            out[item.name] = item.value
        }
        return out
    }

    func testRFC7636AppendixBVector() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        XCTAssertEqual(PKCE(verifier: verifier).challenge, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        XCTAssertTrue(PKCE.isValidVerifier(verifier))
    }

    func testGeneratedVerifierAndStateAreWellFormedAndUnique() {
        let a = PKCE.make()
        let b = PKCE.make()
        XCTAssertNotEqual(a, b)
        XCTAssertTrue(PKCE.isValidVerifier(a.verifier))
        XCTAssertEqual(a.challenge.count, 43)
        XCTAssertGreaterThanOrEqual(PKCE.makeState().count, 22)  // ≥ 128 bits in base64url
        XCTAssertNotEqual(PKCE.makeState(), PKCE.makeState())
        XCTAssertFalse(PKCE.isValidVerifier("short"))
        XCTAssertFalse(PKCE.isValidVerifier(String(repeating: "a", count: 42) + "+"))
    }

    func testAuthorizationURLEncodesEverythingAndSavesTheConsent() throws {
        let storage = MemoryTokenStorage()
        let auth = partner(ScriptedEndpoint(), storage: storage)
        let url = try auth.authorizationURL(
            redirectURI: "https://shop.example/cb?x=1+2", scope: "restaurants:read orders:read", prompt: "consent")
        let text = url.absoluteString
        XCTAssertTrue(text.hasPrefix("https://api.example/oauth/authorize?response_type=code&client_id=moje-aplikace&"), text)
        XCTAssertTrue(text.contains("redirect_uri=https%3A%2F%2Fshop.example%2Fcb%3Fx%3D1%2B2"), text)
        XCTAssertTrue(text.contains("scope=restaurants%3Aread%20orders%3Aread"), text)
        XCTAssertTrue(text.hasSuffix("&code_challenge_method=S256&prompt=consent"), text)
        let items = query(url)
        let pending = try XCTUnwrap(StateStore(storage: storage, key: key).read().pendingConsent)
        XCTAssertEqual(items["state"], pending.state)
        XCTAssertEqual(items["code_challenge"], PKCE.challenge(for: pending.codeVerifier))
        XCTAssertEqual(pending.redirectURI, "https://shop.example/cb?x=1+2")
        XCTAssertEqual(pending.scope, "restaurants:read orders:read")
        XCTAssertFalse(text.contains(pending.codeVerifier))
        XCTAssertNil(query(try auth.authorizationURL(redirectURI: "app://cb", scope: "a")).keys.first { $0 == "prompt" })
    }

    func testAuthorizationURLWithoutClientIDIsAUsageError() {
        XCTAssertThrowsError(try partner(ScriptedEndpoint(), clientID: nil).authorizationURL(redirectURI: "app://cb", scope: "a")) {
            XCTAssertTrue(($0 as? ProfirestUsageError)?.message.contains("clientID") == true)
        }
    }

    func testCompleteExchangesCodeAndStoresTokens() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_p", refresh: "rt_p"))])
        let storage = MemoryTokenStorage()
        let auth = partner(endpoint, storage: storage)
        let url = try auth.authorizationURL(redirectURI: "app://cb", scope: "orders:read")
        let state = try XCTUnwrap(query(url)["state"])
        let verifier = try XCTUnwrap(StateStore(storage: storage, key: key).read().pendingConsent?.codeVerifier)
        let callback = try XCTUnwrap(URL(string: "app://cb?code=c%2B1&state=\(state)&iss=https%3A%2F%2Fapi.example"))
        try await auth.completeAuthorization(callback)
        XCTAssertEqual(endpoint.allForms, [[
            "grant_type": "authorization_code", "code": "c+1", "redirect_uri": "app://cb", "code_verifier": verifier,
            "client_id": "moje-aplikace",
        ]])
        XCTAssertEqual(endpoint.allBasicAuths, [nil])
        let stored = try StateStore(storage: storage, key: key).read()
        XCTAssertEqual(stored.accessToken, "at_p")
        XCTAssertNil(stored.pendingConsent)
    }

    func testStateMismatchExchangesNothing() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_p"))])
        let storage = MemoryTokenStorage()
        let auth = partner(endpoint, storage: storage)
        _ = try auth.authorizationURL(redirectURI: "app://cb", scope: "orders:read")
        do {
            try await auth.completeAuthorization(parameters: ["code": "c", "state": "forged", "iss": "https://api.example"])
            XCTFail("expected invalid_state")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "invalid_state")
        }
        XCTAssertEqual(endpoint.tokenCalls, 0)
        XCTAssertNotNil(try StateStore(storage: storage, key: key).read().pendingConsent)
    }

    func testIssuerMismatchExchangesNothing() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_p"))])
        let auth = partner(endpoint)
        let state = try XCTUnwrap(query(try auth.authorizationURL(redirectURI: "app://cb", scope: "a"))["state"])
        do {
            try await auth.completeAuthorization(parameters: ["code": "c", "state": state, "iss": "https://evil.example"])
            XCTFail("expected invalid_issuer")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "invalid_issuer")
        }
        XCTAssertEqual(endpoint.tokenCalls, 0)
    }

    func testMissingIssuerIsAnErrorWhenTheServerAlwaysSendsIt() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_p"))])
        let auth = partner(endpoint)
        let state = try XCTUnwrap(query(try auth.authorizationURL(redirectURI: "app://cb", scope: "a"))["state"])
        do {
            try await auth.completeAuthorization(parameters: ["code": "c", "state": state])
            XCTFail("expected invalid_issuer")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "invalid_issuer")
        }
        XCTAssertEqual(endpoint.tokenCalls, 0)
        XCTAssertEqual(endpoint.metadataCalls, 1)
    }

    func testMissingIssuerIsAcceptedFromAServerThatDoesNotSendIt() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_p"))])
        endpoint.metadataAnswer = metadata(issParameter: false)
        let auth = partner(endpoint)
        let state = try XCTUnwrap(query(try auth.authorizationURL(redirectURI: "app://cb", scope: "a"))["state"])
        try await auth.completeAuthorization(parameters: ["code": "c", "state": state])
        XCTAssertEqual(endpoint.tokenCalls, 1)
    }

    func testDeniedConsentIsAccessDenied() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_p"))])
        let storage = MemoryTokenStorage()
        let auth = partner(endpoint, storage: storage)
        let state = try XCTUnwrap(query(try auth.authorizationURL(redirectURI: "app://cb", scope: "a"))["state"])
        let callback = try XCTUnwrap(URL(string: "app://cb?error=access_denied&state=\(state)&iss=https%3A%2F%2Fapi.example"))
        do {
            try await auth.completeAuthorization(callback)
            XCTFail("expected access_denied")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "access_denied")
        }
        XCTAssertEqual(endpoint.tokenCalls, 0)
        XCTAssertNil(try StateStore(storage: storage, key: key).read().pendingConsent)
    }

    func testConfidentialClientSendsTheSecretOnlyAsBasicAuth() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_p"))])
        let auth = partner(endpoint, clientID: "moje aplikace:1", secret: "s3cr+t/é&x y")
        let state = try XCTUnwrap(query(try auth.authorizationURL(redirectURI: "app://cb", scope: "a"))["state"])
        try await auth.completeAuthorization(parameters: ["code": "c", "state": state, "iss": "https://api.example"])
        // base64("moje+aplikace%3A1:s3cr%2Bt%2F%C3%A9%26x+y"), computed with Python's quote_plus.
        XCTAssertEqual(endpoint.allBasicAuths, ["Basic bW9qZSthcGxpa2FjZSUzQTE6czNjciUyQnQlMkYlQzMlQTklMjZ4K3k="])
        let form = try XCTUnwrap(endpoint.allForms.first)
        XCTAssertNil(form["client_secret"])
        XCTAssertNil(form["client_id"])
        XCTAssertFalse(form.values.contains { $0.contains("s3cr") })
    }

    func testOneInstancePerStorageKey() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("partner.json")
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_account_a")), .tokens(.sample("at_account_b"))])
        let a = partner(endpoint, storage: FileTokenStorage(path: path), key: "profirest-api:moje-aplikace:account-a")
        let b = partner(endpoint, storage: FileTokenStorage(path: path), key: "profirest-api:moje-aplikace:account-b")
        let stateA = try XCTUnwrap(query(try a.authorizationURL(redirectURI: "app://cb", scope: "a"))["state"])
        let stateB = try XCTUnwrap(query(try b.authorizationURL(redirectURI: "app://cb", scope: "a"))["state"])
        try await a.completeAuthorization(parameters: ["code": "ca", "state": stateA, "iss": "https://api.example"])
        try await b.completeAuthorization(parameters: ["code": "cb", "state": stateB, "iss": "https://api.example"])
        let storage = FileTokenStorage(path: path)
        XCTAssertEqual(try StateStore(storage: storage, key: "profirest-api:moje-aplikace:account-a").read().accessToken, "at_account_a")
        XCTAssertEqual(try StateStore(storage: storage, key: "profirest-api:moje-aplikace:account-b").read().accessToken, "at_account_b")
    }

    func testInvalidGrantOnExchangeEndsTheConsent() async throws {
        let endpoint = ScriptedEndpoint([.oauth("invalid_grant")])
        let storage = MemoryTokenStorage()
        let auth = partner(endpoint, storage: storage)
        let state = try XCTUnwrap(query(try auth.authorizationURL(redirectURI: "app://cb", scope: "a"))["state"])
        do {
            try await auth.completeAuthorization(parameters: ["code": "c", "state": state, "iss": "https://api.example"])
            XCTFail("expected invalid_grant")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "invalid_grant")
        }
        XCTAssertNil(try StateStore(storage: storage, key: key).read().pendingConsent)
    }

    func testAConsentOlderThanThirtyMinutesHasExpired() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_p", refresh: "rt_p"))])
        let storage = MemoryTokenStorage()
        let auth = partner(endpoint, storage: storage)
        let state = try XCTUnwrap(query(try auth.authorizationURL(redirectURI: "app://cb", scope: "a"))["state"])
        clock.advance(30 * 60 + 1)
        do {
            try await auth.completeAuthorization(parameters: ["code": "c", "state": state, "iss": "https://api.example"])
            XCTFail("an expired consent connected")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "invalid_state")
            XCTAssertTrue(e.detail?.contains("expired") == true, e.message)
        }
        XCTAssertEqual(endpoint.tokenCalls, 0, "the code is never exchanged")
        XCTAssertNil(try StateStore(storage: storage, key: key).read().pendingConsent, "and the consent is cleared")
    }

    func testAConsentWithinThirtyMinutesCompletesAndANewURLReplacesAnExpiredOne() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_p", refresh: "rt_p"))])
        let auth = partner(endpoint)
        _ = try auth.authorizationURL(redirectURI: "app://cb", scope: "a")
        clock.advance(31 * 60)
        // authorizationURL always starts afresh: the expired consent is simply replaced.
        let state = try XCTUnwrap(query(try auth.authorizationURL(redirectURI: "app://cb", scope: "a"))["state"])
        clock.advance(29 * 60)
        try await auth.completeAuthorization(parameters: ["code": "c", "state": state, "iss": "https://api.example"])
        XCTAssertEqual(endpoint.tokenCalls, 1)
    }
}

extension PKCE {
    /// RFC 7636 4.1: 43–128 characters of `[A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"`.
    static func isValidVerifier(_ text: String) -> Bool {
        (43...128).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                return true
            default:
                return false
            }
        }
    }
}
