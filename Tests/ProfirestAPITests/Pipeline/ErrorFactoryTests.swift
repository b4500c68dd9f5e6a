import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// `ErrorFactory.swift`: an answer or a failure without one → `ProfirestAPIError` — the problem document, bodies that
/// are not one, the status fallbacks and titles, the transport's cause, redaction, Retry-After, the scope hint of a
/// 403 and a proxy's login told from the API's. (`ProfirestAPIError`'s own behaviour: Errors/ErrorTests.)
final class ErrorFactoryTests: XCTestCase {
    // MARK: Answers → errors: every property of the problem, the cause of a failure without an answer

    /// A failure without an answer keeps the transport's error as its cause; an answered error has none; the cause
    /// takes no part in equality.
    func testAFailureWithoutAnAnswerKeepsItsCause() async {
        let h = Harness([.fail(URLError(.cannotConnectToHost)), .problem(404, ErrorCode.notFound)])
        let unreachable = await apiError { try await h.api.get("/restaurants/11", options: .init(retries: 0)) }
        XCTAssertEqual(unreachable?.code, ErrorCode.networkError)
        XCTAssertEqual((unreachable?.underlyingError as? URLError)?.code, .cannotConnectToHost)
        let answered = await apiError { try await h.api.get("/restaurants/11") }
        XCTAssertEqual(answered?.code, ErrorCode.notFound)
        XCTAssertNil(answered?.underlyingError)
        if var copy = unreachable {
            copy.underlyingError = nil
            XCTAssertEqual(copy, unreachable, "the cause is not compared")
            XCTAssertEqual(copy.hashValue, unreachable?.hashValue)
        }
    }

    func testEveryPropertyComesFromTheProblem() async {
        let h = Harness([.problem(409, ErrorCode.staffAmbiguous, headers: ["Profirest-Request-Id": "req_header"], extra: [
            "title": "Stejný PIN má více zaměstnanců", "detail": "Vyberte zaměstnance.", "request_id": "req_01JD8Z5K2M",
            "instance": "/v2/restaurants/11/attendance/punches",
            "candidates": [["id": "emp_2", "name": "Petr Svoboda", "role": "waiter"], ["id": "emp_3", "name": "Eva Dvořáková"]],
        ])])
        let e = await apiError { try await h.api.post("/restaurants/11/attendance/punches", body: ["a": 1]) }
        guard let e else { return }
        XCTAssertEqual(e.code, ErrorCode.staffAmbiguous)
        XCTAssertEqual(e.status, 409)
        XCTAssertEqual(e.title, "Stejný PIN má více zaměstnanců")
        XCTAssertEqual(e.detail, "Vyberte zaměstnance.")
        XCTAssertEqual(e.message, "Stejný PIN má více zaměstnanců – Vyberte zaměstnance.")
        XCTAssertEqual(e.requestID, "req_01JD8Z5K2M")
        XCTAssertEqual(e.candidates.map { $0["name"]?.stringValue }, ["Petr Svoboda", "Eva Dvořáková"])
        XCTAssertEqual(e.problem?["instance"]?.stringValue, "/v2/restaurants/11/attendance/punches")
        XCTAssertEqual(e.problemModel?.candidates?.first?.id, "emp_2")
        XCTAssertEqual(e.problemModel?.requestId, "req_01JD8Z5K2M")
        XCTAssertFalse(e.retryable)
    }

    func testFieldErrorsAndExistingID() async {
        let h = Harness([
            .problem(422, ErrorCode.validationFailed, extra: [
                "errors": [["pointer": "/items/0/quantity", "code": "too_small", "message": "Quantity must be at least 1."]],
            ]),
            .problem(409, ErrorCode.externalIdConflict, extra: ["existing_id": "ord_7"]),
        ])
        let v = await apiError { try await h.api.post("/restaurants/11/quotes", body: ["a": 1]) }
        XCTAssertEqual(v?.errors.first?["pointer"]?.stringValue, "/items/0/quantity")
        XCTAssertEqual(v?.errors.first?["message"]?.stringValue, "Quantity must be at least 1.")
        XCTAssertEqual(v?.message, "Title of validation_failed")
        let c = await apiError { try await h.api.post("/restaurants/11/orders", body: ["a": 1]) }
        XCTAssertEqual(c?.existingID, "ord_7")
    }

    func testRequestIDFromTheHeaderWhenTheBodyHasNone() async {
        let h = Harness([.status(404, headers: ["profirest-request-id": "req_h"])])
        let e = await apiError { try await h.api.get("/x") }
        XCTAssertEqual(e?.requestID, "req_h")
    }

    /// A failure without an answer, by its `URLError` code, in the client's language; the transport's error stays
    /// as the cause, and an error that is no `URLError` is a network error naming its type.
    func testATransportFailureIsClassifiedByItsCode() {
        let errors = ErrorFactory(language: "en", redaction: Redaction(secrets: []))
        let cases: [(URLError.Code, String)] = [
            (.timedOut, ErrorCode.timeout), (.serverCertificateUntrusted, ErrorCode.certificateUntrusted),
            (.serverCertificateHasUnknownRoot, ErrorCode.certificateUntrusted),
            (.serverCertificateHasBadDate, ErrorCode.certificateUntrusted), (.cannotParseResponse, ErrorCode.invalidResponse),
            (.notConnectedToInternet, ErrorCode.networkError), (.networkConnectionLost, ErrorCode.networkError),
            (.cannotFindHost, ErrorCode.networkError),
        ]
        for (code, expected) in cases {
            let e = errors.fromTransport(URLError(code))
            XCTAssertEqual(e.code, expected, "\(code)")
            XCTAssertEqual(e.status, 0, "\(code)")
            XCTAssertEqual(e.retryable, expected == ErrorCode.timeout || expected == ErrorCode.networkError, "\(code)")
            XCTAssertEqual(e.title, ErrorCatalog.entry(for: expected)?.titleEN)
            XCTAssertTrue(e.detail?.contains("\(code.rawValue)") == true, e.detail ?? "")
            XCTAssertEqual((e.underlyingError as? URLError)?.code, code)
        }
        XCTAssertTrue(errors.fromTransport(URLError(.serverCertificateUntrusted)).detail?.contains(ErrorFactory.howToTrust) == true)
        struct SocketGone: Error {}
        let other = errors.fromTransport(SocketGone())
        XCTAssertEqual(other.code, ErrorCode.networkError)
        XCTAssertTrue(other.detail?.contains("SocketGone") == true, other.detail ?? "")
        XCTAssertTrue(other.underlyingError is SocketGone)
    }

    // MARK: Bodies that are not problem+json; the status fallback and the catalog's titles

    func testAnHTMLBadGatewayFromAProxy() async {
        let h = Harness([.status(502, headers: ["Content-Type": "text/html"], body: "<html><h1>502 Bad Gateway</h1></html>")], retries: 0)
        let e = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.badGateway)
        XCTAssertEqual(e?.status, 502)
        XCTAssertEqual(e?.title, "Chyba brány")
        XCTAssertTrue(e?.detail?.contains("text/html") == true, e?.detail ?? "")
        XCTAssertNil(e?.problem)
        XCTAssertEqual(e?.retryable, true)
    }

    func testAnEmpty503() async {
        let h = Harness([.status(503)], retries: 0)
        let e = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.serviceUnavailable)
        XCTAssertTrue(e?.detail?.contains("empty body") == true)
    }

    func testJSONWithoutACodeAndAnUnknownStatus() async {
        let h = Harness([.json(418, ["message": "teapot"]), .json(403, ["error": "nope"])])
        let a = await apiError { try await h.api.get("/x") }
        XCTAssertEqual(a?.code, ErrorCode.httpError)
        XCTAssertEqual(a?.status, 418)
        let b = await apiError { try await h.api.get("/x") }
        XCTAssertEqual(b?.code, ErrorCode.httpError)
    }

    func testEnglishTitlesForLibraryErrors() async {
        let h = Harness([.status(503)], language: "en", retries: 0)
        let e = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(e?.title, "Service temporarily unavailable")
    }

    func testNetworkErrorHasStatusZero() async {
        let h = Harness([.fail(URLError(.notConnectedToInternet))], retries: 0)
        let e = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.networkError)
        XCTAssertEqual(e?.status, 0)
        XCTAssertEqual(e?.title, "Server nejde zastihnout")
    }

    // MARK: Redaction: no token, secret or PIN in any error

    func testSecretsAreBlankedInTheProblemAndTheText() async {
        let token = "conn-token-aaaaaaa-secret"
        let extra: [String: JSONValue] = [
            "detail": .string("token \(token) was rejected"),
            "errors": [["pointer": "/credential/secret", "code": "pattern", "message": "bad", "secret": "4821"]],
            "echo": ["credential": ["method": "pin", "secret": "4821"], "access_token": .string(token)],
        ]
        let h = Harness([.problem(422, ErrorCode.validationFailed, extra: extra)], accessToken: token)
        let e = await apiError { try await h.api.post("/x", body: ["credential": ["method": "pin", "secret": "4821"]]) }
        guard let e else { return }
        for text in [e.description, e.debugDescription, e.message, e.localizedDescription, "\(e.problem!)", "\(e.errors)"] {
            XCTAssertFalse(text.contains(token), text)
            XCTAssertFalse(text.contains("4821"), text)
        }
        XCTAssertEqual(e.problem?["echo"]?["credential"]?["secret"]?.stringValue, "[redacted]")
    }

    func testATokenEchoedAsTheCodeAKeyOrAHeaderIsBlankedToo() async {
        // Found by `make fuzz`: the code, member names and headers came through unscrubbed.
        let token = "conn-token-bbbbbbb-secret"
        let problem = Step.json(400, ["code": .string(token), "errors": [[token: "x"]]], headers: [
            "Content-Type": "application/problem+json", "Profirest-Request-Id": "req \(token)",
        ])
        let notProblem = Step.status(502, headers: ["Content-Type": "text/\(token)", "Profirest-Request-Id": token])
        for step in [problem, notProblem] {
            let h = Harness([step], accessToken: token)
            let e = await apiError { try await h.api.get("/x", options: .init(retries: 0)) }
            guard let e else { continue }
            for text in [e.code, e.description, e.debugDescription, e.message, "\(e.problem as Any)", "\(e.errors)"] {
                XCTAssertFalse(text.contains(token), text)
            }
        }
    }

    // MARK: RetryAfter: delta-seconds and the three HTTP date forms

    let now = Date(timeIntervalSince1970: 784_111_767)  // Sun, 06 Nov 1994 08:49:27 GMT

    func testDeltaSeconds() {
        XCTAssertEqual(RetryAfter.seconds("120", now: now), 120)
        XCTAssertEqual(RetryAfter.seconds(" 0 ", now: now), 0)
        XCTAssertNil(RetryAfter.seconds("-5", now: now))
        XCTAssertNil(RetryAfter.seconds("1.5", now: now))
        XCTAssertNil(RetryAfter.seconds(nil, now: now))
        XCTAssertNil(RetryAfter.seconds("soon", now: now))
    }

    func testTheThreeHTTPDateForms() {
        XCTAssertEqual(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:37 GMT", now: now), 10)
        XCTAssertEqual(RetryAfter.seconds("Sunday, 06-Nov-94 08:49:37 GMT", now: now), 10)
        XCTAssertEqual(RetryAfter.seconds("Sun Nov  6 08:49:37 1994", now: now), 10)
    }

    func testMalformedDatesAreUnreadableNotACrash() {
        for text in [
            "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 CET",
            "Sun, 6 Nov 94 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun Nov  6 08:49 1994",
            "Sun, 06 Nov 1994 08:49:37 GMT GMT", "f\u{0324}\u{FFFD}\u{FFFD}\u{FFFD}inalR'le",  // DateFormatter trapped on this one
            String(repeating: "Sun, ", count: 40),
        ] {
            XCTAssertNil(RetryAfter.seconds(text, now: now), text)
        }
    }

    func testRFC850YearsAreAtMost50YearsAhead() {
        let now2026 = Date(timeIntervalSince1970: 1_795_000_000)  // 2026
        XCTAssertEqual(RetryAfter.httpDate("Sunday, 06-Nov-94 08:49:37 GMT", now: now2026),
                       RetryAfter.httpDate("Sun, 06 Nov 1994 08:49:37 GMT", now: now2026))
        XCTAssertEqual(RetryAfter.httpDate("Monday, 06-Nov-50 08:49:37 GMT", now: now2026),
                       RetryAfter.httpDate("Sun, 06 Nov 2050 08:49:37 GMT", now: now2026))
    }

    func testADateInThePastMeansNow() {
        XCTAssertEqual(RetryAfter.seconds("Sun, 06 Nov 1994 08:00:00 GMT", now: now), 0)
    }

    // MARK: ScopeHint: a 403 insufficient_scope names the scope the call needs, from the contract

    func testTheRefusalNamesTheScopeToAskFor() async throws {
        let h = Harness([.problem(403, "insufficient_scope")], accessToken: "at_test")
        let e = await apiError { try await h.api.get("/restaurants/11/attendance/presence") }
        XCTAssertEqual(e?.code, ErrorCode.insufficientScope)
        XCTAssertTrue(e?.detail?.contains("`attendance:read`") == true, e?.detail ?? "")
        XCTAssertTrue(e?.detail?.contains("pair(scope:)") == true)
    }

    func testTheMostLiteralTemplateWins() {
        let batch = ScopeHint.scopes(method: "POST", url: URL(string: "https://x.cz/v2/restaurants/11/attendance/punches/batch")!)
        XCTAssertEqual(batch, ["attendance:punch"])
        XCTAssertNil(ScopeHint.scopes(method: "GET", url: URL(string: "https://x.cz/v2/nowhere/at/all")!))
    }

    func testOtherErrorsAreLeftAlone() async {
        let h = Harness([.problem(403, "forbidden")], accessToken: "at_test")
        let e = await apiError { try await h.api.get("/restaurants/11/attendance/presence") }
        XCTAssertFalse(e?.detail?.contains("pair(scope:)") == true)
    }

    /// The descriptors the hint reads (internal, generated into Operations.swift) say what the contract says.
    func testOperationDescriptorsDescribeTheContract() {
        let punch = Operations.createAttendancePunch
        XCTAssertEqual(punch.method, "POST")
        XCTAssertEqual(punch.path, "/restaurants/{restaurant_id}/attendance/punches")
        XCTAssertFalse(punch.isRoot)
        XCTAssertEqual(punch.requestBody, "AttendancePunchCreate")
        XCTAssertEqual(punch.responses, [200: "AttendancePunch", 201: "AttendancePunch"])
        XCTAssertEqual(punch.scopes, ["attendance:punch"])
        XCTAssertTrue(Operations.createToken.isRoot)
        XCTAssertEqual(Operations.createToken.path, "/oauth/token")
        XCTAssertEqual(Operations.getBackupContent.responses, [200: "Data"])
        XCTAssertEqual(Operations.createReceipt.staffSession, "required")
        XCTAssertEqual(Operations.all.count, 45)
        XCTAssertEqual(Set(Operations.all.map(\.id)).count, 45)
    }

    // MARK: ProxyChallenge: a proxy's own login — a 407, or a 401 whose challenge is not Bearer — is reported as such
    // and never spends a token refresh, on API calls and at the token endpoint

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
