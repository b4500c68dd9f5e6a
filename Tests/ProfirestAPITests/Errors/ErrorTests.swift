import Foundation
import XCTest
@testable import ProfirestAPI

/// The reference's "Errors" section: every property of `ProfirestAPIError`, non-problem bodies, undecodable
/// bodies, library-only codes and redaction.
final class ErrorTests: XCTestCase {
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

    // Bodies that are not problem+json.

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

    // Success bodies that do not decode.

    func testAnUndecodableBodyNamesTheTypeAndThePath() async {
        let h = Harness([.json(200, ["data": [["employee": ["id": "e1", "name": 5, "role": "waiter"], "state": "working",
                                               "since": "2026-11-29T07:58:12Z"]]])])
        let e = await apiError { _ = try await h.api.get("/presence", as: AttendancePresencePage.self) }
        XCTAssertEqual(e?.code, ErrorCode.invalidResponse)
        XCTAssertEqual(e?.status, 200)
        XCTAssertTrue(e?.detail?.contains("AttendancePresencePage") == true, e?.detail ?? "")
        XCTAssertTrue(e?.detail?.contains("$.data[0].employee.name") == true, e?.detail ?? "")
    }

    func testAMissingMemberIsNamed() async {
        let h = Harness([.json(200, ["id": "o1"])])
        let e = await apiError { let _: StaffMember = try await h.api.get("/x") }
        XCTAssertTrue(e?.detail?.contains("$.name") == true, e?.detail ?? "")
    }

    func testAnHTMLSuccessForAModel() async {
        let h = Harness([.status(200, headers: ["Content-Type": "text/html"], body: "<html></html>")])
        let e = await apiError { let _: StaffMember = try await h.api.get("/x") }
        XCTAssertEqual(e?.code, ErrorCode.invalidResponse)
        XCTAssertTrue(e?.detail?.contains("text/html") == true)
    }

    func testNoBodyForAModel() async {
        let h = Harness([.status(204)])
        let e = await apiError { let _: StaffMember = try await h.api.get("/x") }
        XCTAssertEqual(e?.code, ErrorCode.invalidResponse)
        XCTAssertTrue(e?.detail?.contains("no body") == true)
    }

    // No token, secret or PIN in any error.

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

    func testDescriptionAndDebugDescription() {
        let e = ProfirestAPIError(code: "staff_locked", status: 429, title: "Too many wrong attempts", detail: "wait",
                                  retryAfter: 60, requestID: "req_9")
        XCTAssertEqual(e.description, "staff_locked (429): Too many wrong attempts – wait [req_9]")
        XCTAssertTrue(e.debugDescription.contains("retryAfter: 60"))
        XCTAssertEqual(e.errorDescription, "Too many wrong attempts – wait")
    }

    func testUsageErrorSaysHowToFix() {
        let e = ProfirestUsageError("Pass a path such as /restaurants/11.")
        XCTAssertEqual(e.description, "ProfirestUsageError: Pass a path such as /restaurants/11.")
        XCTAssertEqual(e.localizedDescription, "Pass a path such as /restaurants/11.")
    }
}
