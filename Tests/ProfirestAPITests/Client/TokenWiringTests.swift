import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport
import ProfirestTesting

/// The identity behind the request pipeline: refresh after 401, one refresh for a stampede, losing the pairing,
/// where tokens and the client secret may go.
final class TokenWiringTests: XCTestCase {
    // The first two run on the testing kit's server (ProfirestTesting), which takes one access token and answers the
    // refresh grant with new tokens, as the real server does.

    func testInvalidTokenRefreshesOnceAndRetriesOnceWithoutUsingARetry() async throws {
        let server = ProfirestTestServer()
        // retries: 0 — the retry after the refresh must not count as one.
        let api = try server.pairedClient(clientID: "profirest-pos") { $0.retries = 0 }
        server.expireAccessToken()
        let connection = try await api.connection()
        XCTAssertEqual(connection.restaurantId, Fixtures.getConnection.restaurantId)
        XCTAssertEqual(server.requests.map(\.url.path), ["/v2/connection", "/oauth/token", "/v2/connection"])
        let refresh = server.requests("POST", "/oauth/token")[0]
        XCTAssertEqual(refresh.form, ["grant_type": "refresh_token", "refresh_token": "rt_test_1", "client_id": "profirest-pos"])
        XCTAssertEqual(refresh.header("Content-Type"), "application/x-www-form-urlencoded")
        XCTAssertEqual(server.requests.last?.bearer, "at_test_3")
        // The new tokens are stored, and the next request goes out with the new token without another refresh.
        try await api.get("/connection")
        XCTAssertEqual(server.refreshCount, 1)
        XCTAssertEqual(server.requests.last?.bearer, "at_test_3")
    }

    func testAThousandConcurrentRequestsOnAnExpiredTokenRefreshExactlyOnce() async throws {
        let server = ProfirestTestServer()
        let api = try server.pairedClient(clientID: "profirest-pos")
        server.expireAccessToken()
        let failures = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<1000 {
                group.addTask {
                    do {
                        try await api.get("/restaurants/11/orders/ord_\(i)")
                        return 0
                    } catch {
                        return 1
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        XCTAssertEqual(failures, 0)
        XCTAssertEqual(server.refreshCount, 1)
        XCTAssertEqual(server.requests("POST", "/oauth/token").count, 1)
        let answered = server.requests.filter { $0.url.path.hasPrefix("/v2/") && $0.bearer == "at_test_3" }
        XCTAssertEqual(answered.count, 1000, "each request answered once with the new token")
    }

    func testInvalidGrantUnpairsPendingAndLaterRequestsAndCallsOnUnpairedOnce() async throws {
        let transport = ScriptedTransport { request in
            if request.url.path == "/oauth/token" {
                await Task.yield()
                return Answers.oauth("invalid_grant")
            }
            return ok
        }
        let unpaired = CallRecorder<ProfirestAPIError>()
        let client = try WiredClient(
            transport: transport, tokens: ("at_stale_0123456789", "rt_1_0123456789", -10),
            onUnpaired: { unpaired.record($0) })
        let api = client.api
        let codes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    do {
                        try await api.get("/connection")
                        return "ok"
                    } catch let e as ProfirestAPIError {
                        return e.code
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        XCTAssertEqual(Set(codes), [ErrorCode.notPaired])
        let later = await apiError { try await api.get("/connection") }
        XCTAssertEqual(later?.code, ErrorCode.notPaired)
        XCTAssertEqual(later?.status, 401)
        XCTAssertEqual(later?.retryable, false)
        XCTAssertEqual(unpaired.all.map(\.code), [ErrorCode.notPaired])
        XCTAssertEqual(transport.requests("POST", "/oauth/token").count, 1)
        XCTAssertEqual(transport.requests.filter { $0.url.path.hasPrefix("/v2/") }.count, 0, "nothing sent with a dead token")
        XCTAssertFalse(api.isPaired)
        XCTAssertNil(try client.storage.get("profirest-api:profirest-pos"), "the tokens are deleted")
    }

    func testInvalidClientKeepsTheTokensAndFailsOnlyThisRequest() async throws {
        let transport = ScriptedTransport { request in
            request.url.path == "/oauth/token" ? Answers.oauth("invalid_client", status: 401) : ok
        }
        let unpaired = CallRecorder<ProfirestAPIError>()
        let client = try WiredClient(
            transport: transport, tokens: ("at_stale_0123456789", "rt_1_0123456789", -10),
            onUnpaired: { unpaired.record($0) })
        let e = await apiError { try await client.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.invalidToken)
        XCTAssertTrue(e?.detail?.contains("invalid_client") == true)
        XCTAssertTrue(client.api.isPaired)
        XCTAssertEqual(unpaired.all.count, 0)
    }

    func testAFixedAccessTokenIsNeverRefreshed() async throws {
        let transport = ScriptedTransport { _ in .problem(401, ErrorCode.invalidToken) }
        let client = try WiredClient(transport: transport, clientID: "profirest-pos", accessToken: "fixed_0123456789")
        XCTAssertTrue(client.api.isPaired)
        let e = await apiError { try await client.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.invalidToken)
        XCTAssertEqual(transport.requests.map(\.url.path), ["/v2/connection"])
        XCTAssertEqual(transport.requests[0].bearer, "fixed_0123456789")
    }

    func testAPairedClientWithoutTokensFailsWithNotPairedAndSendsNothing() async throws {
        let transport = ScriptedTransport { _ in ok }
        let client = try WiredClient(transport: transport)
        let e = await apiError { try await client.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.notPaired)
        XCTAssertEqual(transport.requests.count, 0)
    }

    func testAClientWithoutClientIDIsAnonymousAndSendsNoAuthorization() async throws {
        let transport = ScriptedTransport { _ in ok }
        let client = try WiredClient(transport: transport, clientID: nil)
        try await client.api.get("/connection")
        XCTAssertNil(transport.requests[0].header("Authorization"))
    }

    func testPairWithoutClientIDIsAUsageErrorAndSendsNothing() async throws {
        let transport = ScriptedTransport { _ in ok }
        let client = try WiredClient(transport: transport, clientID: nil)
        let e = await usageError { _ = try await client.api.pair(scope: "restaurants:read", deviceName: "KDS") }
        XCTAssertTrue(e?.message.contains("clientID") == true)
        XCTAssertEqual(transport.requests.count, 0)
    }

    func testTokensNeverGoToAnotherOrigin() async throws {
        let transport = ScriptedTransport { _ in ok }
        let client = try WiredClient(transport: transport, tokens: ("at_valid_0123456789", "rt_1_0123456789", 1800))
        try await client.api.get("https://downloads.example.com/backup.zip")
        try await client.api.get("/connection")
        XCTAssertEqual(transport.requests.count, 2)
        XCTAssertNil(transport.requests[0].header("Authorization"))
        XCTAssertNil(transport.requests[0].header("Profirest-Staff-Token"))
        XCTAssertEqual(transport.requests[1].bearer, "at_valid_0123456789")
        XCTAssertEqual(transport.requests[1].url.host, "api.mujprofirest.cz")
    }

    func testARedirectFromTheAPIIsNotFollowed() async throws {
        let transport = ScriptedTransport { _ in .status(302, headers: ["Location": "https://evil.example.com/steal"]) }
        let client = try WiredClient(transport: transport, tokens: ("at_valid_0123456789", "rt_1_0123456789", 1800))
        let e = await apiError { try await client.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.unexpectedRedirect)
        XCTAssertEqual(transport.requests.map { $0.url.host }, ["api.mujprofirest.cz"])
    }

    func testAConfidentialClientSendsItsSecretOnlyAsHTTPBasic() async throws {
        let transport = ScriptedTransport { request in
            if request.url.path == "/oauth/token" { return Answers.tokens("at_new_0123456789", refresh: nil) }
            return ok
        }
        let client = try WiredClient(
            transport: transport, clientID: "sandbox-eshop", clientSecret: "sandbox-secret",
            tokens: ("at_stale_0123456789", "rt_keep_0123456789", -10))
        try await client.api.get("/restaurants/11/orders")
        let token = try XCTUnwrap(transport.requests("POST", "/oauth/token").first)
        XCTAssertEqual(token.header("Authorization"), "Basic " + Data("sandbox-eshop:sandbox-secret".utf8).base64EncodedString())
        XCTAssertEqual(token.form, ["grant_type": "refresh_token", "refresh_token": "rt_keep_0123456789"])
        for request in transport.requests {
            let body = String(decoding: request.body ?? Data(), as: UTF8.self)
            XCTAssertFalse(body.contains("sandbox-secret"), "\(request.url.path)")
            XCTAssertFalse(request.url.absoluteString.contains("sandbox-secret"))
            if request.url.path != "/oauth/token" {
                XCTAssertEqual(request.header("Authorization"), "Bearer at_new_0123456789")
            }
        }
        // A confidential client keeps its refresh token when the answer carries none.
        XCTAssertTrue(try XCTUnwrap(client.storage.get("profirest-api:sandbox-eshop")).contains("rt_keep_0123456789"))
    }

    func testTheRefreshStormGuardBecomesANonRetryableInvalidTokenWithRetryAfter() throws {
        let core = try WiredClient(transport: ScriptedTransport { _ in ok }).api.core
        let mapped = try XCTUnwrap(
            Identity.requestError(AuthFailure.refreshLimit(count: 5, window: 60, retryAfter: 42), core: core) as? ProfirestAPIError)
        XCTAssertEqual(mapped.code, ErrorCode.invalidToken)
        XCTAssertEqual(mapped.status, 401)
        XCTAssertEqual(mapped.retryAfter, 42)
        XCTAssertFalse(mapped.retryable)
        XCTAssertTrue(mapped.detail?.contains("clock") == true)
    }

    func testUnpairForgetsLocallyRevokesAndKeepsWorkingOffline() async throws {
        let transport = ScriptedTransport { request in
            request.url.path == "/oauth/revoke" ? .fail(URLError(.notConnectedToInternet)) : ok
        }
        let unpaired = CallRecorder<ProfirestAPIError>()
        let client = try WiredClient(
            transport: transport, tokens: ("at_valid_0123456789", "rt_1_0123456789", 1800),
            onUnpaired: { unpaired.record($0) })
        await client.api.unpair()
        XCTAssertFalse(client.api.isPaired)
        XCTAssertNil(client.api.restaurantID)
        let revoke = try XCTUnwrap(transport.requests("POST", "/oauth/revoke").first)
        XCTAssertEqual(revoke.form["token"], "rt_1_0123456789")
        XCTAssertEqual(revoke.form["token_type_hint"], "refresh_token")
        XCTAssertEqual(unpaired.all.count, 0, "unpairing on purpose is not a lost pairing")
        XCTAssertEqual(transport.requests("POST", "/oauth/revoke").count, 1, "unpair() makes one attempt: it must return promptly offline")
        XCTAssertEqual(client.api.isPaired, false)
    }

    func testDisconnectThrowsWhenTheGrantOutlivesItAndALaterOneEndsIt() async throws {
        let serverDown = Locked(true)
        let transport = ScriptedTransport { request in
            guard request.url.path == "/oauth/revoke" else { return ok }
            return serverDown.withLock { $0 } ? .problem(503, ErrorCode.serviceUnavailable) : .respond(APIResponse(status: 200))
        }
        let client = try WiredClient(transport: transport, tokens: ("at_valid_0123456789", "rt_1_0123456789", 1800))
        do {
            try await client.api.disconnect()
            XCTFail("a Disconnect button must learn that the grant is still alive")
        } catch let e as ProfirestAPIError {
            XCTAssertEqual(e.code, ErrorCode.serviceUnavailable)
        }
        XCTAssertFalse(client.api.isPaired, "the local state is cleared either way")
        XCTAssertEqual(transport.requests("POST", "/oauth/revoke").count, 4)
        let document = try XCTUnwrap(client.storage.get(StateStore.defaultKey(clientID: "profirest-pos")))
        XCTAssertTrue(document.contains(#""pending_revocations":["rt_1_0123456789"]"#), "kept to revoke later")

        serverDown.withLock { $0 = false }
        try await client.api.disconnect()
        XCTAssertEqual(transport.requests("POST", "/oauth/revoke").last?.form["token"], "rt_1_0123456789")
        XCTAssertNil(try client.storage.get(StateStore.defaultKey(clientID: "profirest-pos")))
    }
}
