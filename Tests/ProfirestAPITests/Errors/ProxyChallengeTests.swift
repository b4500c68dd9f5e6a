import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// A proxy's own login — a 407, or a 401 whose challenge is not Bearer — is reported as such and never spends a
/// token refresh, on API calls and at the token endpoint.
final class ProxyChallengeTests: XCTestCase {
    func testChallengesAreParsedWithSchemeAndRealm() {
        let parsed = ProxyChallenge.challenges(#"Basic realm="corp \"main\"", charset="UTF-8", Negotiate, Digest realm=x, qop="auth""#)
        XCTAssertEqual(parsed, [
            ProxyChallenge(scheme: "Basic", realm: #"corp "main""#), ProxyChallenge(scheme: "Negotiate", realm: nil),
            ProxyChallenge(scheme: "Digest", realm: "x"),
        ])
        XCTAssertNil(ProxyChallenge(APIResponse(status: 401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])))
        XCTAssertNil(ProxyChallenge(APIResponse(status: 401, headers: ["www-authenticate": "Basic realm=a, Bearer"])),
                     "a Bearer challenge among others is the API's")
        XCTAssertNil(ProxyChallenge(APIResponse(status: 401)), "no challenge: the body decides")
        XCTAssertEqual(ProxyChallenge(APIResponse(status: 401, headers: ["WWW-Authenticate": "Basic realm=\"proxy-realm\""]))?.summary,
                       #"Basic realm "proxy-realm""#)
        XCTAssertEqual(ProxyChallenge(APIResponse(status: 407))?.scheme, "unknown")
        XCTAssertEqual(ProxyChallenge(APIResponse(status: 407, headers: ["Proxy-Authenticate": "NTLM"]))?.scheme, "NTLM")
    }

    private func client(answering step: Step) throws -> (WiredClient, ScriptedTransport) {
        let transport = ScriptedTransport { request in
            if request.url.path == "/oauth/token" { return Answers.tokens("at_new_0123456789") }
            return step
        }
        return (try WiredClient(transport: transport, tokens: ("at_old_0123456789", "rt_1_0123456789", 1800), retries: 0), transport)
    }

    func testABasicChallengeOnAnAPICallIsTheProxysAndRefreshesNothing() async throws {
        for step in [
            Step.respond(APIResponse(status: 401, headers: ["WWW-Authenticate": #"Basic realm="corp-proxy""#, "Content-Type": "text/html"],
                                     data: Data("<h1>401</h1>".utf8))),
            .respond(APIResponse(status: 407, headers: ["Proxy-Authenticate": #"Negotiate, Basic realm="fw""#])),
        ] {
            let (client, transport) = try client(answering: step)
            let e = await apiError { try await client.api.get("/connection") }
            XCTAssertEqual(e?.code, ErrorCode.proxyAuthenticationRequired)
            XCTAssertTrue(e?.detail?.contains("corp-proxy") == true || e?.detail?.contains("Negotiate") == true, e?.detail ?? "")
            XCTAssertEqual(e?.retryable, false)
            XCTAssertEqual(transport.requests("POST", "/oauth/token").count, 0, "no refresh for a proxy's login")
            XCTAssertTrue(try XCTUnwrap(client.storage.get("profirest-api:profirest-pos")).contains("rt_1_0123456789"),
                          "the tokens are untouched")
            XCTAssertTrue(client.api.isPaired)
        }
    }

    func testTheAPIsOwnRejectionStillRefreshes() async throws {
        let transport = ScriptedTransport { request in
            if request.url.path == "/oauth/token" { return Answers.tokens("at_new_0123456789") }
            return request.bearer == "at_new_0123456789"
                ? Answers.connection
                : .problem(401, ErrorCode.invalidToken, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
        }
        let client = try WiredClient(transport: transport, tokens: ("at_old_0123456789", "rt_1_0123456789", 1800), retries: 0)
        _ = try await client.api.connection()
        XCTAssertEqual(transport.requests("POST", "/oauth/token").count, 1)
    }

    /// At the token endpoint: an OAuth error body is the authorization server's; a bodiless 401 with the server's own
    /// challenge (`Basic realm="profirest"`, what Linux URLSession leaves of it) too; any other challenge is a proxy's,
    /// which leaves the stored tokens and the pairing alone.
    func testAtTheTokenEndpointTheServersChallengeIsToldFromAProxys() async throws {
        let cases: [(Step, String)] = [
            (.json(401, ["error": "invalid_client", "error_description": "bad secret"],
                   headers: ["WWW-Authenticate": #"Basic realm="profirest""#]), "invalid_client"),
            (.respond(APIResponse(status: 401, headers: ["WWW-Authenticate": #"Basic realm="profirest""#])), "invalid_client"),
            (.respond(APIResponse(status: 401, headers: ["WWW-Authenticate": #"Basic realm="proxy-realm""#],
                                  data: Data("<html>login</html>".utf8))), ErrorCode.proxyAuthenticationRequired),
            (.respond(APIResponse(status: 407, headers: ["Proxy-Authenticate": "Basic realm=\"fw\""])), ErrorCode.proxyAuthenticationRequired),
        ]
        for (answer, expected) in cases {
            let transport = ScriptedTransport { request in
                if request.url.path == "/oauth/token" { return answer }
                return .problem(401, ErrorCode.invalidToken, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
            }
            // Expired: the call refreshes first.
            let client = try WiredClient(transport: transport, tokens: ("at_old_0123456789", "rt_1_0123456789", -10), retries: 0)
            do {
                try await client.api.get("/connection")
                XCTFail("\(expected): the refresh fails")
            } catch let error as ProfirestAPIError {
                if expected == "invalid_client" {
                    // The refresh failed for the client's credentials: the call's error says so, the tokens are kept.
                    XCTAssertEqual(error.code, ErrorCode.invalidToken, "\(error)")
                    XCTAssertTrue(error.detail?.contains("invalid_client") == true, error.detail ?? "")
                } else {
                    XCTAssertEqual(error.code, expected, "\(error)")
                }
                if expected == ErrorCode.proxyAuthenticationRequired {
                    XCTAssertTrue(client.api.isPaired, "a proxy's login does not unpair")
                    XCTAssertTrue(try XCTUnwrap(client.storage.get("profirest-api:profirest-pos")).contains("rt_1_0123456789"))
                }
            }
        }
    }
}
