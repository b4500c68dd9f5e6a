import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// A 401 whose body is the API's problem document keeps its code whatever challenge comes with it; only a 401
/// without it and with a challenge other than Bearer, or a 407, is a proxy's login.
final class APIsOwn401Tests: XCTestCase {
    private static let proxy = ErrorCode.proxyAuthenticationRequired

    private static func problemBody(_ code: String) -> Data {
        Data(#"{"type":"https://api.mujprofirest.cz/problems/\#(code)","title":"t","status":401,"code":"\#(code)"}"#.utf8)
    }

    private static func answer(
        status: Int = 401, challenge: String?, header: String = "WWW-Authenticate", contentType: String?, body: Data
    ) -> APIResponse {
        var headers: [String: String] = [:]
        if let challenge { headers[header] = challenge }
        if let contentType { headers["Content-Type"] = contentType }
        return APIResponse(status: status, headers: headers, data: body)
    }

    func testTheCodeOfA401ByBodyAndChallenge() {
        let errors = ErrorFactory(language: "en", redaction: Redaction(secrets: []))
        let challenges: [(name: String, value: String?, withoutProblem: String)] = [
            ("Bearer", #"Bearer realm="profirest", error="invalid_token""#, ErrorCode.invalidToken),
            ("Basic", #"Basic realm="profirest""#, Self.proxy),
            ("Negotiate", "Negotiate", Self.proxy),
            ("none", nil, ErrorCode.invalidToken),
            ("Basic and Negotiate", #"Basic realm="corp", Negotiate"#, Self.proxy),
            ("Negotiate and Bearer", #"Negotiate, Bearer realm="profirest""#, ErrorCode.invalidToken),
        ]
        for (name, value, withoutProblem) in challenges {
            for code in [ErrorCode.invalidToken, ErrorCode.staffSessionExpired] {
                for type in ["application/problem+json", "application/json; charset=utf-8"] {
                    let made = errors.fromResponse(
                        Self.answer(challenge: value, contentType: type, body: Self.problemBody(code)), now: Date())
                    XCTAssertEqual(made.code, code, "\(name) challenge with the API's \(code) problem as \(type)")
                    XCTAssertEqual(made.status, 401)
                }
            }
            let bodies: [(String, String?, Data)] = [
                ("an HTML page", "text/html", Data("<h1>Authorization required</h1>".utf8)),
                ("no body", nil, Data()),
                ("JSON without a code", "application/json", Data(#"{"message":"login first"}"#.utf8)),
                ("an empty code", "application/problem+json", Data(#"{"code":"","title":"x"}"#.utf8)),
            ]
            for (what, type, body) in bodies {
                let made = errors.fromResponse(Self.answer(challenge: value, contentType: type, body: body), now: Date())
                XCTAssertEqual(made.code, withoutProblem, "\(name) challenge with \(what)")
            }
        }
        // A 407 is a proxy's whatever its body says.
        for body in [Self.problemBody(ErrorCode.invalidToken), Data()] {
            for challenge in [#"Basic realm="fw""#, nil] {
                let made = errors.fromResponse(
                    Self.answer(status: 407, challenge: challenge, header: "Proxy-Authenticate",
                                contentType: "application/problem+json", body: body), now: Date())
                XCTAssertEqual(made.code, Self.proxy, "407 with \(challenge ?? "no challenge")")
            }
        }
    }

    /// The API's own `invalid_token` under a Basic challenge renews the token once and the call goes through.
    func testTheAPIsInvalidTokenUnderABasicChallengeRefreshesOnceAndSucceeds() async throws {
        let transport = ScriptedTransport { request in
            if request.url.path == "/oauth/token" { return Answers.tokens("at_new_0123456789") }
            return request.bearer == "at_new_0123456789"
                ? Answers.connection
                : .problem(401, ErrorCode.invalidToken, headers: ["WWW-Authenticate": #"Basic realm="profirest""#])
        }
        let client = try WiredClient(transport: transport, tokens: ("at_old_0123456789", "rt_1_0123456789", 1800), retries: 0)
        let connection = try await client.api.connection()
        XCTAssertEqual(connection.restaurantId, "11")
        XCTAssertEqual(transport.requests("POST", "/oauth/token").count, 1)
        XCTAssertEqual(transport.requests("GET", "/v2/connection").map(\.bearer), ["at_old_0123456789", "at_new_0123456789"])
    }

    /// Rejected again after the refresh: the API's error, once refreshed, never a proxy's login.
    func testRejectedAgainAfterTheRefreshIsTheAPIsInvalidToken() async throws {
        let transport = ScriptedTransport { request in
            if request.url.path == "/oauth/token" { return Answers.tokens("at_new_0123456789") }
            return .problem(401, ErrorCode.invalidToken, headers: ["WWW-Authenticate": #"Basic realm="profirest""#])
        }
        let client = try WiredClient(transport: transport, tokens: ("at_old_0123456789", "rt_1_0123456789", 1800), retries: 0)
        let e = await apiError { _ = try await client.api.connection() }
        XCTAssertEqual(e?.code, ErrorCode.invalidToken)
        XCTAssertEqual(transport.requests("POST", "/oauth/token").count, 1, "one refresh per call")
    }

    /// At the token endpoint too: the API's problem document under a Basic challenge is read as the catalog's error.
    func testAtTheTokenEndpointTheAPIsProblemIsNoProxysLogin() async throws {
        let transport = ScriptedTransport { request in
            if request.url.path == "/oauth/token" {
                return .problem(401, ErrorCode.invalidToken, headers: ["WWW-Authenticate": #"Basic realm="gateway""#])
            }
            return .problem(401, ErrorCode.invalidToken, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
        }
        let client = try WiredClient(transport: transport, tokens: ("at_old_0123456789", "rt_1_0123456789", -10), retries: 0)
        let e = await apiError { _ = try await client.api.connection() }
        XCTAssertNotEqual(e?.code, Self.proxy, e?.detail ?? "")
        XCTAssertEqual(e?.code, ErrorCode.invalidToken)
    }
}
