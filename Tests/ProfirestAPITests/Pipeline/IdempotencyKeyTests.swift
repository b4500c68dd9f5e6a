import Foundation
import XCTest
@testable import ProfirestAPI

/// `Idempotency-Key` on every POST by default, the same on every automatic retry, the caller's honoured, never on GET.
final class IdempotencyKeyTests: XCTestCase {
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
}
