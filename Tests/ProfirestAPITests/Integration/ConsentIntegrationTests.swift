import Foundation
import XCTest
@testable import ProfirestAPI

/// Partner consent (code + PKCE S256, RFC 9207) through the sandbox's real redirect.
final class ConsentIntegrationTests: XCTestCase {
    private var sandbox: SandboxServer!
    private var directory: TemporaryDirectory!

    override func setUp() async throws {
        sandbox = try SandboxServer.start()
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        sandbox?.stop()
        directory?.remove()
    }

    /// Opens the consent URL the way a browser would, with the library's transport, which refuses redirects:
    /// the sandbox's 302 comes back as it is, and its Location is the callback.
    private func followConsent(_ url: URL) async throws -> URL {
        let response = try await URLSessionTransport().send(HTTPRequest(method: "GET", url: url))
        XCTAssertEqual(response.status, 302)
        return try XCTUnwrap(response.header("Location").flatMap(URL.init(string:)))
    }

    func testAPublicAppCompletesTheConsentFromTheCallbackURL() async throws {
        try await sandbox.admin("POST", "consents/auto", ["decision": "approve", "restaurant_ids": ["11"]])
        let api = sandbox.client(clientID: "moje-aplikace")
        let url = try api.authorizationURL(redirectURI: "mojeaplikace://profirest", scope: "restaurants:read orders:read")
        let callback = try await followConsent(url)
        XCTAssertEqual(callback.scheme, "mojeaplikace")
        let connection = try await api.completeAuthorization(callback)
        XCTAssertEqual(connection.kind, "partner")
        XCTAssertEqual(connection.restaurants.map(\.id), ["11"])
        XCTAssertTrue(api.isPaired)
        XCTAssertEqual(Set(api.scopes), ["restaurants:read", "orders:read"])
        let restaurant: JSONValue? = try await api.get("/restaurants/11")
        XCTAssertEqual(restaurant?["id"]?.stringValue, "11")
        // The code is single-use: the same callback again is refused, and the connection stays.
        do {
            try await api.completeAuthorization(callback)
            XCTFail("a callback was completed twice")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "invalid_state")
        }
        XCTAssertTrue(api.isPaired)
    }

    func testAConfidentialServerPerAccountCompletesFromParametersAndRefreshesWithBasic() async throws {
        try await sandbox.admin("POST", "consents/auto", ["decision": "approve", "restaurant_ids": ["11", "12"]])
        let file = directory.file("tokens.json")
        let api = sandbox.client(
            clientID: "sandbox-eshop", clientSecret: "sandbox-secret", storage: FileTokenStorage(path: file),
            storageKey: "profirest-api:sandbox-eshop:account-42")
        let url = try api.authorizationURL(redirectURI: "http://127.0.0.1:9/profirest/callback", scope: "restaurants:read orders:read")
        let callback = try await followConsent(url)
        var parameters: [String: String] = [:]
        for item in URLComponents(url: callback, resolvingAgainstBaseURL: false)?.queryItems ?? [] {
            parameters[item.name] = item.value
        }
        XCTAssertNotNil(parameters["iss"])
        let connection = try await api.completeAuthorization(parameters: parameters)
        XCTAssertEqual(Set(connection.restaurants.map(\.id)), ["11", "12"])
        let document = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(document.contains("profirest-api:sandbox-eshop:account-42"))
        XCTAssertFalse(document.contains("sandbox-secret"), "the client secret is never stored")
        // Expired on the server: the next request refreshes (client_secret_basic) and goes on.
        try await sandbox.admin("POST", "tokens/expire", ["client_id": "sandbox-eshop"])
        let orders: JSONValue? = try await api.get("/restaurants/12/orders")
        XCTAssertNotNil(orders?["data"])
        let observed6 = try await sandbox.refreshes("sandbox-eshop")
        XCTAssertEqual(observed6, 1)
    }

    func testARefusedConsentIsAccessDenied() async throws {
        try await sandbox.admin("POST", "consents/auto", ["decision": "deny"])
        let api = sandbox.client(clientID: "moje-aplikace")
        let url = try api.authorizationURL(redirectURI: "mojeaplikace://profirest", scope: "restaurants:read")
        let callback = try await followConsent(url)
        do {
            try await api.completeAuthorization(callback)
            XCTFail("a refused consent connected")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "access_denied")
        }
        XCTAssertFalse(api.isPaired)
    }

    func testConnectingAgainRevokesTheFirstGrantOnTheServer() async throws {
        let storage = MemoryTokenStorage()
        let api = sandbox.client(clientID: "moje-aplikace", storage: storage)
        let stored = StateStore(storage: storage, key: StateStore.defaultKey(clientID: "moje-aplikace"))
        try await sandbox.admin("POST", "consents/auto", ["decision": "approve", "restaurant_ids": ["11", "12"]])
        let first = try await api.completeAuthorization(
            try await followConsent(try api.authorizationURL(redirectURI: "mojeaplikace://profirest", scope: "restaurants:read")))
        XCTAssertEqual(Set(first.restaurants.map(\.id)), ["11", "12"])
        let firstTokens = try stored.read()
        let firstRefresh = try XCTUnwrap(firstTokens.refreshToken)
        let firstAccess = try XCTUnwrap(firstTokens.accessToken)

        // The owner narrows access to one restaurant: the app connects again.
        try await sandbox.admin("POST", "consents/auto", ["decision": "approve", "restaurant_ids": ["11"]])
        let second = try await api.completeAuthorization(
            try await followConsent(try api.authorizationURL(redirectURI: "mojeaplikace://profirest", scope: "restaurants:read")))
        XCTAssertEqual(second.restaurants.map(\.id), ["11"])
        XCTAssertNotEqual(try stored.read().refreshToken, firstRefresh)
        XCTAssertEqual(try stored.read().pendingRevocations, [], "the server confirmed the revocation")

        // The first grant is over on the server: its refresh token no longer refreshes, its access token no longer works.
        do {
            try await sandbox.raw("POST", "/oauth/token", form: PercentEncoding.formBody([
                "grant_type": "refresh_token", "refresh_token": firstRefresh, "client_id": "moje-aplikace",
            ]))
            XCTFail("the replaced grant still refreshes")
        } catch let failure as ProfirestTestFailure {
            XCTAssertTrue(String(describing: failure).contains("invalid_grant"), String(describing: failure))
        }
        let old = try await URLSessionTransport().send(HTTPRequest(
            method: "GET", url: try XCTUnwrap(URL(string: sandbox.api + "/v2/restaurants/12")),
            headers: ["Authorization": "Bearer " + firstAccess]))
        XCTAssertEqual(old.status, 401)
        let restaurant: JSONValue? = try await api.get("/restaurants/11")
        XCTAssertEqual(restaurant?["id"]?.stringValue, "11", "the new grant works")
    }
}
