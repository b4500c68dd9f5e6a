import Foundation
import XCTest
@testable import ProfirestAPI

/// `ProfirestRequest.swift`: a call as it reaches the transport — the reference's "Requests" section: paths and the
/// base address (`RequestTarget`, `APIBase`), the query (`QueryEncoding`), bodies (`RequestBody`), headers, the
/// `Idempotency-Key` (on every POST by default, the same on every automatic retry, the caller's honoured, never on
/// GET) — and a success decoded into the caller's type (`ResponseDecoding`).
final class ProfirestRequestTests: XCTestCase {
    // MARK: Paths, relative to /v2, and the base address

    func testPathsAreRelativeToV2() async throws {
        let h = Harness([ok])
        try await h.api.get("/restaurants/11/catalog")
        XCTAssertEqual(h.last?.url.absoluteString, "https://api.mujprofirest.cz/v2/restaurants/11/catalog")
        XCTAssertEqual(h.last?.method, "GET")
    }

    func testOAuthAndWellKnownGoFromTheRoot() async throws {
        let h = Harness([ok, ok])
        try await h.api.post("/oauth/token", body: .text("grant_type=x", contentType: "application/x-www-form-urlencoded"))
        try await h.api.get("/.well-known/oauth-authorization-server")
        XCTAssertEqual(h.requests[0].url.absoluteString, "https://api.mujprofirest.cz/oauth/token")
        XCTAssertEqual(h.requests[1].url.absoluteString, "https://api.mujprofirest.cz/.well-known/oauth-authorization-server")
    }

    func testBaseURLWithTrailingSlashAndPort() async throws {
        let h = Harness([ok], baseURL: "http://127.0.0.1:8080/")
        try await h.api.get("/connection")
        XCTAssertEqual(h.last?.url.absoluteString, "http://127.0.0.1:8080/v2/connection")
    }

    func testPathCharactersThatCannotStandInAURLAreEncoded() async throws {
        let h = Harness([ok])
        try await h.api.get("/customers/Jana Nováková")
        XCTAssertEqual(h.last?.url.absoluteString, "https://api.mujprofirest.cz/v2/customers/Jana%20Nov%C3%A1kov%C3%A1")
    }

    func testPathMustStartWithSlash() async {
        let h = Harness([])
        let e = await usageError { try await h.api.get("restaurants/11") }
        XCTAssertTrue(e?.message.contains("must start with \"/\"") == true)
        XCTAssertEqual(h.requests.count, 0)
    }

    func testAV2PrefixIsAUsageErrorThatSaysTheFix() async {
        let h = Harness([])
        let e = await usageError { try await h.api.get("/v2/restaurants/11") }
        XCTAssertTrue(e?.message.contains("\"/restaurants/11\"") == true, e?.message ?? "")
    }

    func testAnInvalidBaseURLIsReportedByTheFirstRequest() async {
        let h = Harness([], baseURL: "ftp://example.com")
        let e = await usageError { try await h.api.get("/connection") }
        XCTAssertTrue(e?.message.contains("http(s)") == true)
    }

    // MARK: Query: empty values left out, arrays joined with commas, stable order, `+` encoded

    func testQueryEncoding() async throws {
        let h = Harness([ok])
        try await h.api.get("/events", options: .init(query: [
            "types": ["order.created", "order.paid"], "limit": 50, "empty": "", "none": nil, "cursor": "a+b/c=d&e f",
            "active": true, "noItems": .list([]), "lat": 1.5,
        ]))
        XCTAssertEqual(
            h.last?.url.absoluteString,
            "https://api.mujprofirest.cz/v2/events?active=true&cursor=a%2Bb%2Fc%3Dd%26e%20f&lat=1.5&limit=50&types=order.created,order.paid")
    }

    func testQueryKeepsAQueryWrittenInThePath() async throws {
        let h = Harness([ok])
        try await h.api.get("/events?since=x", options: .init(query: ["limit": 5]))
        XCTAssertEqual(h.last?.url.absoluteString, "https://api.mujprofirest.cz/v2/events?since=x&limit=5")
    }

    /// The two flavours in one place: RFC 3986 for paths and queries, x-www-form-urlencoded for the OAuth forms;
    /// both encode `+`, which a server reads bare as a space.
    func testTheTwoPercentEncodings() {
        XCTAssertEqual(PercentEncoding.rfc3986("a b+c*~/"), "a%20b%2Bc%2A~%2F")
        XCTAssertEqual(PercentEncoding.form("a b+c*~/"), "a+b%2Bc*%7E%2F")
        XCTAssertEqual(PercentEncoding.form("řš"), "%C5%99%C5%A1")
        XCTAssertEqual(
            PercentEncoding.formBody(["scope": "attendance:read orders", "grant_type": "refresh_token"]),
            "grant_type=refresh_token&scope=attendance%3Aread+orders")
    }

    // MARK: Bodies: dictionary or array literal, Encodable model, .data, .text

    func testDictionaryLiteralBodyIsSortedJSON() async throws {
        let h = Harness([ok])
        try await h.api.patch("/customers/c1", body: ["name": "Jana Nováková", "age": 30, "tags": ["a"]])
        XCTAssertEqual(String(decoding: h.last!.body!, as: UTF8.self), #"{"age":30,"name":"Jana Nováková","tags":["a"]}"#)
        XCTAssertEqual(h.last?.header("Content-Type"), "application/json")
        XCTAssertEqual(h.last?.method, "PATCH")
    }

    func testArrayLiteralBody() async throws {
        let h = Harness([ok])
        try await h.api.put("/x", body: [["id": "a"], ["id": "b"]])
        XCTAssertEqual(String(decoding: h.last!.body!, as: UTF8.self), #"[{"id":"a"},{"id":"b"}]"#)
    }

    func testEncodableModelBody() async throws {
        let h = Harness([ok])
        let punch = AttendancePunchCreate(id: "p1", type: "clock_in", credential: StaffCredential(method: "pin", secret: "1234"))
        try await h.api.post("/restaurants/11/attendance/punches", body: punch)
        let sent = try JSONDecoder().decode(JSONValue.self, from: h.last!.body!)
        XCTAssertEqual(sent, try JSONValue(encoding: punch))
        XCTAssertEqual(h.last?.header("Content-Type"), "application/json")
    }

    func testDataAndTextBodiesAreSentRaw() async throws {
        let h = Harness([ok, ok])
        let zip = Data([0x50, 0x4B, 0x03, 0x04])
        try await h.api.post("/restaurants/11/backups", body: .data(zip, contentType: "application/zip"))
        XCTAssertEqual(h.requests[0].body, zip)
        XCTAssertEqual(h.requests[0].header("Content-Type"), "application/zip")
        try await h.api.post("/notes", body: .text("ahoj"))
        XCTAssertEqual(h.requests[1].body, Data("ahoj".utf8))
        XCTAssertEqual(h.requests[1].header("Content-Type"), "text/plain; charset=utf-8")
    }

    func testRawDataAsAnEncodableModelIsAUsageError() async {
        let h = Harness([])
        let e = await usageError { try await h.api.post("/restaurants/11/backups", body: Data([1, 2])) }
        XCTAssertTrue(e?.message.contains(".data(") == true)
    }

    func testNoBodyMeansNoContentType() async throws {
        let h = Harness([ok])
        try await h.api.post("/restaurants/11/orders/o1/cancel")
        XCTAssertNil(h.last?.body)
        XCTAssertNil(h.last?.header("Content-Type"))
    }

    // MARK: Headers: Accept, Accept-Language, If-Match, If-None-Match, contentType, custom; the method

    func testDefaultHeaders() async throws {
        let h = Harness([ok])
        try await h.api.get("/connection")
        XCTAssertEqual(h.last?.header("Accept"), "application/json")
        XCTAssertEqual(h.last?.header("Accept-Language"), "cs")
        XCTAssertEqual(h.last?.header("User-Agent"), "ProfirestAPI-Swift/1.0.0")
        XCTAssertNil(h.last?.header("Authorization"))
        XCTAssertNil(h.last?.header("Idempotency-Key"))
    }

    func testLanguageOptionAndNil() async throws {
        let en = Harness([ok], language: "en")
        try await en.api.get("/connection")
        XCTAssertEqual(en.last?.header("Accept-Language"), "en")
        let none = Harness([ok], language: nil)
        try await none.api.get("/connection")
        XCTAssertNil(none.last?.header("Accept-Language"))
    }

    func testRequestOptionHeaders() async throws {
        let h = Harness([ok])
        try await h.api.patch("/customers/c1", body: ["a": 1], options: .init(
            ifMatch: "\"v1\"", ifNoneMatch: "\"v0\"", accept: "application/zip", contentType: "application/merge-patch+json",
            headers: ["X-Trace": "t1", "accept": "text/csv"]))
        XCTAssertEqual(h.last?.header("If-Match"), "\"v1\"")
        XCTAssertEqual(h.last?.header("If-None-Match"), "\"v0\"")
        XCTAssertEqual(h.last?.header("Content-Type"), "application/merge-patch+json")
        XCTAssertEqual(h.last?.header("X-Trace"), "t1")
        // A custom header replaces the library's of another spelling rather than doubling it.
        XCTAssertEqual(h.last?.headers.keys.filter { $0.lowercased() == "accept" }.count, 1)
        XCTAssertEqual(h.last?.header("Accept"), "text/csv")
    }

    func testTokensCannotBeSetThroughHeaders() async {
        let h = Harness([])
        let e = await usageError { try await h.api.get("/connection", options: .init(headers: ["authorization": "Bearer x"])) }
        XCTAssertTrue(e?.message.contains("auth: .bearer") == true)
        let s = await usageError { try await h.api.get("/connection", options: .init(headers: ["Profirest-Staff-Token": "x"])) }
        XCTAssertTrue(s?.message.contains("staff: .token") == true)
    }

    func testRequestSendsAnyMethod() async throws {
        let h = Harness([ok])
        try await h.api.request("put", "/customers/c1", body: ["a": 1])
        XCTAssertEqual(h.last?.method, "PUT")
    }

    // MARK: IdempotencyKey

    func testEveryPOSTGetsAUUIDv7Key() async throws {
        let h = Harness([ok, ok])
        try await h.api.post("/restaurants/11/quotes", body: ["a": 1])
        try await h.api.post("/restaurants/11/quotes", body: ["a": 1])
        let keys = h.requests.compactMap { $0.header("Idempotency-Key") }
        XCTAssertEqual(keys.count, 2)
        XCTAssertNotEqual(keys[0], keys[1])
        XCTAssertEqual(Array(keys[0])[14], "7")
    }

    func testAKeyIsSentAlsoWhenRetriesAreZero() async throws {
        let h = Harness([ok], retries: 0)
        try await h.api.post("/restaurants/11/quotes", body: ["a": 1])
        XCTAssertNotNil(h.last?.header("Idempotency-Key"))
    }

    func testTheSameKeyOnEveryAutomaticRetry() async throws {
        let h = Harness([.status(503), .fail(URLError(.networkConnectionLost)), .problem(409, ErrorCode.idempotencyInProgress), ok])
        try await h.api.post("/restaurants/11/orders", body: ["a": 1])
        XCTAssertEqual(h.requests.count, 4)
        XCTAssertEqual(Set(h.requests.compactMap { $0.header("Idempotency-Key") }).count, 1)
        XCTAssertEqual(h.requests.compactMap { $0.header("Idempotency-Key") }.count, 4)
    }

    func testTheCallersKeyIsHonoured() async throws {
        let h = Harness([.status(503), ok, ok])
        let localID = 42
        try await h.api.post("/restaurants/11/orders", body: ["a": 1], options: .init(idempotencyKey: .key("order-\(localID)")))
        try await h.api.post("/restaurants/11/orders", body: ["a": 1], options: .init(idempotencyKey: "literal-key"))
        XCTAssertEqual(h.requests.map { $0.header("Idempotency-Key") }, ["order-42", "order-42", "literal-key"])
    }

    func testNoneSendsNoKey() async throws {
        let h = Harness([ok])
        try await h.api.post("/restaurants/11/quotes", body: ["a": 1], options: .init(idempotencyKey: .none))
        XCTAssertNil(h.last?.header("Idempotency-Key"))
    }

    func testNeverOnGETEvenWhenAsked() async throws {
        let h = Harness([ok])
        try await h.api.get("/connection", options: .init(idempotencyKey: "k"))
        XCTAssertNil(h.last?.header("Idempotency-Key"))
    }

    func testOtherMethodsOnlyWithTheCallersKey() async throws {
        let h = Harness([ok, ok, ok])
        try await h.api.put("/customers/c1", body: ["a": 1])
        try await h.api.delete("/tabs/t1")
        try await h.api.patch("/customers/c1", body: ["a": 1], options: .init(idempotencyKey: "p1"))
        XCTAssertEqual(h.requests.map { $0.header("Idempotency-Key") }, [nil, nil, "p1"])
    }

    func testTheBodyOfEveryRetryIsByteIdentical() async throws {
        let h = Harness([.status(502), ok])
        try await h.api.post("/restaurants/11/orders", body: ["b": 1, "a": ["z": 1, "y": 2]])
        XCTAssertEqual(h.requests[0].body, h.requests[1].body)
    }

    // MARK: ResponseDecoding: success bodies that do not decode

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
}
