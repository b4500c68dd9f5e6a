import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport
import ProfirestTesting

/// `OutboxDelivery.swift`, one delivery round: the oldest writes first, punches in batches of at most 100 under their
/// journaled key with a result each, a batch refused as a whole sent punch by punch, keep or refuse by the one rule
/// (`SendPolicy.keepsWriteWaiting`), a refusal to its caller or to `onFailure` without blocking the writes behind it.
final class OutboxDeliveryTests: XCTestCase, OutboxTesting {
    var directory: URL!

    override func setUpWithError() throws { directory = try Self.makeOutboxDirectory() }

    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    func testARefusalGoesToItsCallerOrToOnFailureAndBlocksNothing() async throws {
        let failures = Locked([OutboxFailure]())
        let h = Harness(
            [offline, offline, .problem(422, "validation_failed"), .json(201, ["id": "c2"]), .problem(409, "conflict")],
            accessToken: "at_test")
        let outbox = try h.api.outbox(path: path, onFailure: { failure in failures.withLock { $0.append(failure) } })
        _ = try await outbox.post("/customers", body: ["name": "Bad"], idempotencyKey: "k-bad")
        _ = try await outbox.post("/customers", body: ["name": "Good"], idempotencyKey: "k-good")
        await outbox.flush()
        XCTAssertEqual(failures.withLock { $0.map(\.item.id) }, ["k-bad"], "refused later: reported")
        XCTAssertEqual(failures.withLock { $0.first?.error.code }, "validation_failed")
        XCTAssertEqual(outbox.status.count, 0, "the write behind the refused one went out")
        let e = await apiError { _ = try await outbox.post("/customers", body: ["name": "Twin"], idempotencyKey: "k-twin") }
        XCTAssertEqual(e?.code, "conflict", "refused while its caller waits: thrown")
        XCTAssertEqual(failures.withLock { $0.count }, 1)
        XCTAssertEqual(outbox.status.count, 0)
    }

    func testWhatLeavesAWriteWaiting() async throws {
        let waiting: [Step] = [
            .problem(503, "service_unavailable"), .problem(429, "rate_limited", headers: ["Retry-After": "7"]),
            .problem(409, "idempotency_in_progress"), .problem(401, "invalid_token"), .problem(403, "insufficient_scope"),
            .status(200, headers: ["Content-Type": "application/json"], body: "<html>not json"),
            .status(522, headers: ["Content-Type": "text/html"], body: "<html>origin timed out"),
            .status(302, headers: ["Location": "http://portal.example/login"]),
            .status(407, headers: ["Proxy-Authenticate": "Basic realm=\"office\""]),
            .fail(URLError(.cannotParseResponse)),
        ]
        for step in waiting {
            try? FileManager.default.removeItem(atPath: path)
            let h = Harness([step], accessToken: "at_test", retries: 0)
            let outbox = try h.api.outbox(path: path)
            let outcome = try await outbox.post("/customers", body: ["name": "Jana"])
            guard case .queued = outcome else { return XCTFail("\(step): \(outcome)") }
            XCTAssertEqual(outbox.status.count, 1)
        }
    }

    func testPunchesGoInBatchesOfAHundredWithAResultEach() async throws {
        let failures = Locked([OutboxFailure]())
        let h = Harness(Array(repeating: offline, count: 150), accessToken: "at_test")
        let outbox = try h.api.outbox(path: path, onFailure: { failure in failures.withLock { $0.append(failure) } })
        var ids: [String] = []
        for i in 0..<150 {
            let p = punch(i % 2 == 0 ? "clock_in" : "clock_out", pin: i == 7 ? "9999" : "1234")
            ids.append(p.id)
            _ = try await outbox.punch(restaurantID: "11", p)
        }
        XCTAssertEqual(outbox.status.count, 150)
        let stored = try journal()
        XCTAssertEqual(try JSONCoding.decoder.decode(JSONValue.self, from: stored[0].body)["credential"]?["secret"], "1234",
                       "the punch with its credential, for later")

        let batchTransport = BatchAnswering(refusing: [ids[7]: (401, "staff_credentials_invalid")])
        let api = ProfirestApi(options: .init(accessToken: "at_test", transport: batchTransport.transport, clock: { Harness.now }))
        let replay = try api.outbox(path: path, onFailure: { failure in failures.withLock { $0.append(failure) } })
        await replay.flush()
        XCTAssertEqual(replay.status.count, 0)
        let batches = batchTransport.requests
        XCTAssertEqual(batches.map { $0.url.path }, Array(repeating: "/v2/restaurants/11/attendance/punches/batch", count: 3))
        let sent = batches.map { (try? JSONCoding.decoder.decode(JSONValue.self, from: $0.body ?? Data()))?["punches"]?.arrayValue ?? [] }
        // The first punch's batch was begun (and sent, unanswered) when it was handed in: it goes again as it was,
        // under its key, before the others are batched.
        XCTAssertEqual(sent.map(\.count), [1, 100, 49])
        XCTAssertEqual(Set(batches.map { $0.header("Idempotency-Key") }).count, 3)
        XCTAssertEqual(h.requests.first?.header("Idempotency-Key"), batches.first?.header("Idempotency-Key"))
        XCTAssertEqual(sent.flatMap { $0 }.compactMap { $0["id"]?.stringValue }, ids, "in order")
        XCTAssertNotNil(sent.first?.first?["occurred_at"], "each punch keeps the time it happened")
        XCTAssertEqual(failures.withLock { $0.map(\.item.id) }, [ids[7]])
        XCTAssertEqual(failures.withLock { $0.first?.error.code }, "staff_credentials_invalid")
        XCTAssertEqual(try journal().count, 0, "PINs leave the file with their punches")
        let raw = String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
        XCTAssertFalse(raw.contains("\"op\":\"add\""), "not even as records of settled punches: the file was compacted")
    }

    /// On the testing kit's server (ProfirestTesting), which records punches by id and answers a batch per punch.
    func testAPunchDeliveredAtOnceAnswersWithItsPunchAndAnAmbiguousPinIsThrown() async throws {
        let server = ProfirestTestServer()
        let outbox = try server.pairedClient().outbox(path: path)
        let p = punch()
        let outcome = try await outbox.punch(restaurantID: "11", p)
        guard case .delivered(let answer) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(answer?["id"]?.stringValue, p.id)
        XCTAssertEqual(server.recordedPunches[p.id]?["occurred_at"], answer?["occurred_at"])

        let ambiguous = punch()
        server.answer(
            "POST", "/v2/restaurants/{restaurant_id}/attendance/punches/batch",
            with: .staffAmbiguous([("emp_2", "Petr Svoboda"), ("emp_3", "Eva Dvořáková")]))
        let e = await apiError { _ = try await outbox.punch(restaurantID: "11", ambiguous) }
        XCTAssertEqual(e?.code, ErrorCode.staffAmbiguous)
        XCTAssertEqual(e?.candidates.count, 2)
        XCTAssertEqual(outbox.status.count, 0)
        XCTAssertEqual(Set(server.recordedPunches.keys), [p.id])
    }

    func testABatchRefusedAsAWholeIsSentPunchByPunch() async throws {
        let failures = Locked([OutboxFailure]())
        let punches = [punch(), punch("clock_out"), punch()]
        try seed(punches)
        // The server refuses the batch of three as a whole, then takes the punches one by one except the second.
        let alone = { (id: String, status: Int) -> Step in
            .json(200, ["results": [["id": .string(id), "status": .integer(status),
                                     "problem": ["code": "attendance_state_conflict", "title": "No", "status": .integer(status)]]]])
        }
        let replay = Harness(
            [.problem(422, "validation_failed"), alone(punches[0].id, 201), alone(punches[1].id, 409), alone(punches[2].id, 201)],
            accessToken: "at_test")
        let again = try replay.api.outbox(path: path, onFailure: { failure in failures.withLock { $0.append(failure) } })
        await again.flush()
        XCTAssertEqual(again.status.count, 0)
        XCTAssertEqual(replay.requests.count, 4)
        XCTAssertEqual(failures.withLock { $0.map(\.item.id) }, [punches[1].id])
    }

    /// Issue 20, 1: a punch with a wrong PIN during a lockout is refused at once with the lock's seconds — never
    /// "saved offline" to be waited out and refused five minutes later.
    func testAPunchDuringALockoutIsRefusedAtOnceWithItsSeconds() async throws {
        let transport = BatchAnswering(refusing: [:])
        let api = ProfirestApi(options: .init(accessToken: "at_test", transport: transport.transport, clock: { Harness.now }))
        let outbox = try api.outbox(path: path)
        let locked = punch(pin: "0000")
        transport.refuse(locked.id, 429, "staff_locked", retryAfter: 300)
        let e = await apiError { _ = try await outbox.punch(restaurantID: "11", locked) }
        XCTAssertEqual(e?.code, ErrorCode.staffLocked)
        XCTAssertEqual(e?.retryAfter, 300)
        XCTAssertEqual(outbox.status.count, 0, "not kept")
        XCTAssertEqual(try journal().count, 0, "its PIN left the file")
        XCTAssertEqual(transport.requests.count, 1)
        // The same as a single request: a 429 staff_locked is refused, a 429 rate_limited waits.
        let h = Harness([.problem(429, "staff_locked", headers: ["Retry-After": "300"]), .problem(429, "rate_limited")],
                        accessToken: "at_test")
        let second = try h.api.outbox(path: directory.appendingPathComponent("second.json").path)
        let refused = await apiError { _ = try await second.post("/staff-things", body: ["pin": "0000"]) }
        XCTAssertEqual(refused?.code, ErrorCode.staffLocked)
        guard case .queued = try await second.post("/customers", body: ["name": "Jana"]) else { return XCTFail("rate_limited waits") }
    }

    /// Issue 20, 3: a batch of punches goes again as the same bytes under the same Idempotency-Key until the server
    /// answered it — through a drop after the commit, another drop, and a restart with a new punch queued meanwhile
    /// (which goes in a batch of its own, under another key).
    func testABatchGoesAgainWithItsKeyAndBytesUntilAnswered() async throws {
        let first = [punch(), punch(), punch()]
        try seed(first)
        let lost = Step.fail(URLError(.networkConnectionLost))   // the server committed, the answer was lost
        let h = Harness([lost, lost], accessToken: "at_test")
        let outbox = try h.api.outbox(path: path)
        await outbox.flush()
        await outbox.flush()
        let late = punch("clock_out")
        try seed([late])
        // A new process: the batch begun by the last one goes first, as it was.
        let replay = BatchAnswering(refusing: [:])
        let api = ProfirestApi(options: .init(accessToken: "at_test", transport: replay.transport, clock: { Harness.now }))
        let again = try api.outbox(path: path)
        await again.flush()
        XCTAssertEqual(again.status.count, 0)
        let all = h.requests + replay.requests
        XCTAssertEqual(all.count, 4)
        let key = all[0].header("Idempotency-Key")
        XCTAssertNotNil(key)
        XCTAssertEqual(all[0..<3].map { $0.header("Idempotency-Key") }, [key, key, key], "one key for the batch")
        XCTAssertEqual(Set(all[0..<3].map { $0.body }).count, 1, "the same bytes each time")
        XCTAssertEqual(punches(in: all[0]), first.map(\.id))
        XCTAssertEqual(punches(in: all[3]), [late.id])
        XCTAssertNotEqual(all[3].header("Idempotency-Key"), key)
    }

    /// A refused batch's punches each go alone under a key of their own, begun in the journal like any batch.
    func testAPunchSentAloneAfterItsBatchWasRefusedKeepsItsOwnKey() async throws {
        let punches = [punch(), punch()]
        try seed(punches)
        let h = Harness([.problem(422, "validation_failed"), .fail(URLError(.networkConnectionLost))], accessToken: "at_test")
        let outbox = try h.api.outbox(path: path)
        await outbox.flush()
        let replay = BatchAnswering(refusing: [:])
        let api = ProfirestApi(options: .init(accessToken: "at_test", transport: replay.transport, clock: { Harness.now }))
        await (try api.outbox(path: path)).flush()
        XCTAssertEqual(self.punches(in: h.requests[1]), [punches[0].id])
        XCTAssertEqual(self.punches(in: replay.requests[0]), [punches[0].id], "the lone punch again, as it was")
        XCTAssertEqual(replay.requests[0].header("Idempotency-Key"), h.requests[1].header("Idempotency-Key"))
        XCTAssertNotEqual(h.requests[0].header("Idempotency-Key"), h.requests[1].header("Idempotency-Key"))
        XCTAssertEqual(try journal().count, 0)
    }
}
