import Foundation
import XCTest
@testable import ProfirestAPI

/// `Core`'s tokens: the fixed `accessToken`, "no token", the renewal after 401 invalid_token, the staff option,
/// and where tokens may go.
final class CoreTokenTests: XCTestCase {
    func testFixedAccessTokenIsSentAsBearer() async throws {
        let h = Harness([ok], accessToken: "fixed-token-123456")
        try await h.api.get("/connection")
        XCTAssertEqual(h.last?.header("Authorization"), "Bearer fixed-token-123456")
    }

    func testAFixedTokenIsNeverRefreshedThe401GoesToTheCaller() async {
        let h = Harness([.problem(401, ErrorCode.invalidToken)], accessToken: "fixed-token-123456")
        let e = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.invalidToken)
        XCTAssertEqual(h.requests.count, 1)
    }

    func testWithoutATokenRequestsGoWithoutAuthorization() async throws {
        let h = Harness([ok])
        try await h.api.get("/.well-known/oauth-authorization-server")
        XCTAssertNil(h.last?.header("Authorization"))
    }

    func testInvalidTokenRefreshesOnceAndRetriesNotCounted() async throws {
        let auth = TestAuthorizer(token: "old-token-aaaaaaaa", refreshTo: "new-token-bbbbbbbb")
        let h = Harness([.problem(401, ErrorCode.invalidToken), ok], authorizer: auth, retries: 0)
        try await h.api.post("/restaurants/11/orders", body: ["a": 1])
        XCTAssertEqual(h.requests.map { $0.header("Authorization") }, ["Bearer old-token-aaaaaaaa", "Bearer new-token-bbbbbbbb"])
        XCTAssertEqual(auth.state.withLock { $0.rejectedTokens }, ["old-token-aaaaaaaa"])
        XCTAssertEqual(h.requests[0].header("Idempotency-Key"), h.requests[1].header("Idempotency-Key"))
        XCTAssertEqual(h.sleeps.all, [])
    }

    func testTheRefreshDoesNotUseUpRetries() async throws {
        let auth = TestAuthorizer(token: "old-token-aaaaaaaa", refreshTo: "new-token-bbbbbbbb")
        let h = Harness([.status(503), .problem(401, ErrorCode.invalidToken), .status(503), ok], authorizer: auth, retries: 2)
        try await h.api.get("/connection")
        XCTAssertEqual(h.requests.count, 4)
        XCTAssertEqual(h.sleeps.all, [1, 2])
        XCTAssertEqual(h.requests.last?.header("Authorization"), "Bearer new-token-bbbbbbbb")
    }

    func testOnlyOneRefreshPerCall() async {
        let auth = TestAuthorizer(token: "old-token-aaaaaaaa", refreshTo: "new-token-bbbbbbbb")
        let h = Harness([.problem(401, ErrorCode.invalidToken), .problem(401, ErrorCode.invalidToken)], authorizer: auth)
        let e = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.invalidToken)
        XCTAssertEqual(h.requests.count, 2)
        XCTAssertEqual(auth.state.withLock { $0.rejectedTokens.count }, 1)
    }

    func testWhenTheRefreshCannotGiveATokenThe401GoesOut() async {
        let auth = TestAuthorizer(token: "old-token-aaaaaaaa", refreshTo: nil)
        let h = Harness([.problem(401, ErrorCode.invalidToken)], authorizer: auth)
        let e = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.invalidToken)
        XCTAssertEqual(h.requests.count, 1)
    }

    func testNoRefreshWhenTheRequestCarriedNoToken() async {
        let auth = TestAuthorizer(token: nil, refreshTo: "new-token-bbbbbbbb")
        let h = Harness([.problem(401, ErrorCode.invalidToken)], authorizer: auth)
        _ = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(auth.state.withLock { $0.rejectedTokens }, [])
        XCTAssertEqual(h.requests.count, 1)
    }

    func testAuthNoneAndBearer() async throws {
        let auth = TestAuthorizer(token: "conn-token-aaaaaaa", refreshTo: "new-token-bbbbbbbb")
        let h = Harness([ok, .problem(401, ErrorCode.invalidToken)], authorizer: auth)
        try await h.api.get("/.well-known/x", options: .init(auth: .none))
        XCTAssertNil(h.requests[0].header("Authorization"))
        _ = await apiError { try await h.api.get("/connection", options: .init(auth: .bearer("my-own-token-ccccc"))) }
        XCTAssertEqual(h.requests[1].header("Authorization"), "Bearer my-own-token-ccccc")
        // A bearer of the caller's is never refreshed.
        XCTAssertEqual(auth.state.withLock { $0.rejectedTokens }, [])
        XCTAssertEqual(h.requests.count, 2)
    }

    // Staff option.

    func testStaffRequiredWithoutASessionSendsNothing() async {
        let h = Harness([ok])
        let e = await apiError { try await h.api.post("/restaurants/11/receipts", body: ["a": 1], options: .init(staff: .required)) }
        XCTAssertEqual(e?.code, ErrorCode.staffSessionRequired)
        XCTAssertEqual(e?.status, 403)
        XCTAssertEqual(e?.title, "Je třeba přihlásit zaměstnance")
        XCTAssertEqual(h.requests.count, 0)
    }

    func testStaffAutoSendsTheSessionAndExtendsIt() async throws {
        let auth = TestAuthorizer(token: "conn-token-aaaaaaa", staff: "staff-token-dddddd")
        let h = Harness([ok, ok, ok], authorizer: auth)
        try await h.api.get("/connection")
        try await h.api.get("/connection", options: .init(staff: .required))
        try await h.api.get("/connection", options: .init(staff: .none))
        XCTAssertEqual(h.requests.map { $0.header("Profirest-Staff-Token") }, ["staff-token-dddddd", "staff-token-dddddd", nil])
        XCTAssertEqual(auth.state.withLock { $0.staffSuccesses }, 2)
    }

    func testStaffTokenOption() async throws {
        let h = Harness([ok])
        try await h.api.get("/connection", options: .init(staff: .token("explicit-staff-eeee")))
        XCTAssertEqual(h.last?.header("Profirest-Staff-Token"), "explicit-staff-eeee")
    }

    func testStaffSessionExpiredTellsTheAuthorizer() async {
        let auth = TestAuthorizer(token: nil, staff: "staff-token-dddddd")
        let h = Harness([.problem(401, ErrorCode.staffSessionExpired)], authorizer: auth)
        let e = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.staffSessionExpired)
        XCTAssertEqual(auth.state.withLock { $0.staffRejections }, 1)
        XCTAssertEqual(h.requests.count, 1)
    }

    // Where tokens may go.

    func testAnAbsoluteURLOfTheAPIOriginGetsTheTokens() async throws {
        let auth = TestAuthorizer(token: "conn-token-aaaaaaa", staff: "staff-token-dddddd")
        let h = Harness([ok], authorizer: auth)
        try await h.api.get("https://api.mujprofirest.cz:443/v2/connection")
        XCTAssertEqual(h.last?.url.absoluteString, "https://api.mujprofirest.cz:443/v2/connection")
        XCTAssertEqual(h.last?.header("Authorization"), "Bearer conn-token-aaaaaaa")
    }

    func testAnotherOriginGetsNoTokens() async throws {
        let auth = TestAuthorizer(token: "conn-token-aaaaaaa", staff: "staff-token-dddddd")
        let h = Harness([ok, ok, ok], authorizer: auth)
        try await h.api.get("https://cdn.example.com/backups/b1.zip?sig=abc")
        try await h.api.get("https://api.mujprofirest.cz.evil.example/v2/connection")
        try await h.api.get("http://api.mujprofirest.cz/v2/connection")
        for request in h.requests {
            XCTAssertNil(request.header("Authorization"), request.url.absoluteString)
            XCTAssertNil(request.header("Profirest-Staff-Token"), request.url.absoluteString)
        }
        XCTAssertEqual(h.requests[0].url.absoluteString, "https://cdn.example.com/backups/b1.zip?sig=abc")
    }

    func testExplicitTokensToAnotherOriginAreUsageErrors() async {
        let h = Harness([])
        let a = await usageError { try await h.api.get("https://cdn.example.com/x", options: .init(auth: .bearer("t-aaaaaaaaaa"))) }
        XCTAssertTrue(a?.message.contains("tokens go only to baseURL") == true)
        _ = await usageError { try await h.api.get("https://cdn.example.com/x", options: .init(staff: .required)) }
        _ = await usageError { try await h.api.get("https://cdn.example.com/x", options: .init(staff: .token("s-aaaaaaaa"))) }
        XCTAssertEqual(h.requests.count, 0)
    }

    func testTokensNeverGoOverPlainHTTPToANonLoopbackHost() async throws {
        let remote = Harness([ok], baseURL: "http://api.example.com", accessToken: "conn-token-aaaaaaa")
        let e = await usageError { try await remote.api.get("/connection") }
        XCTAssertTrue(e?.message.contains("plain http") == true)
        XCTAssertEqual(remote.requests.count, 0)
        // Without a token plain http is allowed.
        let anonymous = Harness([ok], baseURL: "http://api.example.com")
        try await anonymous.api.get("/connection")
        XCTAssertEqual(anonymous.requests.count, 1)
        // A loopback sandbox may get tokens over http.
        for base in ["http://127.0.0.1:8080", "http://localhost:9000", "http://[::1]:8080"] {
            let local = Harness([ok], baseURL: base, accessToken: "conn-token-aaaaaaa")
            try await local.api.get("/connection")
            XCTAssertEqual(local.last?.header("Authorization"), "Bearer conn-token-aaaaaaa", base)
        }
    }
}
