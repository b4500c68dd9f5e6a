import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// The outbox over a scripted transport: journaled before the first attempt, removed only on a definitive answer,
/// replayed in order with the same bytes, punches in batches, refusals reported without blocking, bounded.
final class OutboxTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    var path: String { directory.appendingPathComponent("outbox.json").path }
    let offline = Step.fail(URLError(.notConnectedToInternet))

    private func journal() throws -> [JSONValue] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return try JSONCoding.decoder.decode(JSONValue.self, from: data)["items"]?.arrayValue ?? []
    }

    private func punch(_ type: String = "clock_in", pin: String = "1234") -> AttendancePunchCreate {
        AttendancePunchCreate(id: ProfirestApi.uuid(), type: type, credential: StaffCredential(method: "pin", secret: pin))
    }

    func testAWriteIsJournaledBeforeItsAttemptAndLeavesWithTheAnswer() async throws {
        let h = Harness([offline, .json(201, ["id": "c1"])], accessToken: "at_test")
        let outbox = try h.api.outbox(path: path)
        guard case .queued(let item) = try await outbox.post("/customers", body: ["name": "Jana"], idempotencyKey: "key-1") else {
            return XCTFail("no network: queued")
        }
        XCTAssertEqual(item.id, "key-1")
        XCTAssertEqual(item.attempts, 1)
        XCTAssertEqual(item.lastErrorCode, ErrorCode.networkError)
        XCTAssertEqual(try journal().count, 1)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        XCTAssertEqual(outbox.status.count, 1)
        XCTAssertEqual(outbox.status.lastFailure?.code, ErrorCode.networkError)

        let after = await outbox.flush()
        XCTAssertEqual(after.count, 0)
        XCTAssertNil(after.lastFailure)
        XCTAssertEqual(try journal().count, 0)
        XCTAssertEqual(h.requests.count, 2)
        XCTAssertEqual(h.requests.map { $0.header("Idempotency-Key") }, ["key-1", "key-1"])
        XCTAssertEqual(h.requests[0].body, h.requests[1].body, "the same bytes every time")
        XCTAssertNil(h.requests[1].header("Profirest-Staff-Token"))
    }

    func testDeliveredAtOnceWhenNothingWaits() async throws {
        let h = Harness([.json(201, ["id": "c1"])], accessToken: "at_test")
        let outbox = try h.api.outbox(path: path)
        let outcome = try await outbox.post("/customers", body: ["name": "Jana"])
        XCTAssertEqual(outcome, .delivered(["id": "c1"]))
        XCTAssertEqual(outbox.status.count, 0)
        XCTAssertEqual(h.requests.first?.header("Idempotency-Key")?.isEmpty, false)
    }

    func testAQueuedWriteSurvivesARestartAndGoesFirst() async throws {
        let first = Harness([offline], accessToken: "at_test")
        _ = try await first.api.outbox(path: path).post("/customers", body: ["name": "Older"], idempotencyKey: "k-old")
        // A new process: the journal is read back, and the older write is sent before the new one.
        let h = Harness([.json(201, ["id": "c1"]), .json(201, ["id": "c2"])], accessToken: "at_test")
        let outbox = try h.api.outbox(path: path)
        XCTAssertEqual(outbox.items.map(\.id), ["k-old"])
        let outcome = try await outbox.post("/customers", body: ["name": "Newer"], idempotencyKey: "k-new")
        XCTAssertEqual(outcome, .delivered(["id": "c2"]))
        XCTAssertEqual(h.requests.map { $0.header("Idempotency-Key") }, ["k-old", "k-new"])
        XCTAssertEqual(first.requests.first?.body, h.requests.first?.body)
    }

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
        XCTAssertNotNil(stored.first?["body"], "the punch with its credential, for later")

        let batchTransport = BatchAnswering(refusing: [ids[7]: (401, "staff_credentials_invalid")])
        let api = ProfirestApi(options: .init(accessToken: "at_test", transport: batchTransport.transport, clock: { Harness.now }))
        let replay = try api.outbox(path: path, onFailure: { failure in failures.withLock { $0.append(failure) } })
        await replay.flush()
        XCTAssertEqual(replay.status.count, 0)
        let batches = batchTransport.requests
        XCTAssertEqual(batches.map { $0.url.path }, Array(repeating: "/v2/restaurants/11/attendance/punches/batch", count: 2))
        let sent = batches.map { (try? JSONCoding.decoder.decode(JSONValue.self, from: $0.body ?? Data()))?["punches"]?.arrayValue ?? [] }
        XCTAssertEqual(sent.map(\.count), [100, 50])
        XCTAssertEqual(sent.flatMap { $0 }.compactMap { $0["id"]?.stringValue }, ids, "in order")
        XCTAssertNotNil(sent.first?.first?["occurred_at"], "each punch keeps the time it happened")
        XCTAssertEqual(failures.withLock { $0.map(\.item.id) }, [ids[7]])
        XCTAssertEqual(failures.withLock { $0.first?.error.code }, "staff_credentials_invalid")
        XCTAssertEqual(try journal().count, 0, "PINs leave the file with their punches")
    }

    func testAPunchDeliveredAtOnceAnswersWithItsPunchAndAnAmbiguousPinIsThrown() async throws {
        let transport = BatchAnswering(refusing: [:])
        let api = ProfirestApi(options: .init(accessToken: "at_test", transport: transport.transport, clock: { Harness.now }))
        let outbox = try api.outbox(path: path)
        let p = punch()
        let outcome = try await outbox.punch(restaurantID: "11", p)
        guard case .delivered(let answer) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(answer?["id"]?.stringValue, p.id)

        let ambiguous = punch()
        transport.refuse(ambiguous.id, 409, "staff_ambiguous")
        let e = await apiError { _ = try await outbox.punch(restaurantID: "11", ambiguous) }
        XCTAssertEqual(e?.code, ErrorCode.staffAmbiguous)
        XCTAssertEqual(outbox.status.count, 0)
    }

    func testABatchRefusedAsAWholeIsSentPunchByPunch() async throws {
        let failures = Locked([OutboxFailure]())
        let h = Harness([offline, offline, offline], accessToken: "at_test")
        let outbox = try h.api.outbox(path: path, onFailure: { failure in failures.withLock { $0.append(failure) } })
        let punches = [punch(), punch("clock_out"), punch()]
        for p in punches { _ = try await outbox.punch(restaurantID: "11", p) }
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

    func testBadInputIsRefusedWhenHandedIn() async throws {
        let h = Harness([], accessToken: "at_test")
        let outbox = try h.api.outbox(path: path, capacity: 1)
        var noPin = punch()
        noPin.credential = nil
        for bad in [
            { _ = try await outbox.punch(restaurantID: "11", noPin) },
            { _ = try await outbox.punch(restaurantID: "11", AttendancePunchCreate(id: "7", type: "clock_in", credential: StaffCredential(method: "pin", secret: "1"))) },
            { _ = try await outbox.post("https://elsewhere.example/x", body: ["a": 1]) },
            { _ = try await outbox.post("/customers", body: ["a": 1], idempotencyKey: "") },
            { _ = try await outbox.punch(restaurantID: "11", AttendancePunchCreate(id: ProfirestApi.uuid(), type: "lunch", credential: StaffCredential(method: "pin", secret: "1234"))) },
            { _ = try await outbox.punch(restaurantID: "11", AttendancePunchCreate(id: ProfirestApi.uuid(), type: "clock_in", credential: StaffCredential(method: "pin", secret: String(repeating: "1", count: 65)))) },
            { _ = try await outbox.punch(restaurantID: "11/../12", self.punch()) },
        ] as [() async throws -> Void] {
            let e = await usageError(bad)
            XCTAssertNotNil(e)
        }
        XCTAssertEqual(h.requests.count, 0)
        XCTAssertEqual(outbox.status.count, 0)
    }

    func testAFullOutboxRefusesAndDropsNothing() async throws {
        let h = Harness([offline, offline], accessToken: "at_test")
        let outbox = try h.api.outbox(path: path, capacity: 2)
        _ = try await outbox.post("/customers", body: ["n": 1], idempotencyKey: "a")
        _ = try await outbox.post("/customers", body: ["n": 2], idempotencyKey: "b")
        let e = await apiError { _ = try await outbox.post("/customers", body: ["n": 3], idempotencyKey: "c") }
        XCTAssertEqual(e?.code, ErrorCode.outboxFull)
        XCTAssertEqual(outbox.items.map(\.id), ["a", "b"])
    }

    func testACorruptJournalIsAClearError() throws {
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
        let h = Harness([], accessToken: "at_test")
        XCTAssertThrowsError(try h.api.outbox(path: path)) { error in
            XCTAssertEqual((error as? StorageError)?.kind, .corrupt)
        }
    }

    func testRunWaitsPerRetryAfterOrBackoffAndDeliversWhenTheServerIsBack() async throws {
        let h = Harness(
            [offline, offline, .problem(503, "service_unavailable", headers: ["Retry-After": "9"]), .json(201, ["id": "c1"])],
            accessToken: "at_test", retryDelay: 1, random: 0.5)
        let outbox = try h.api.outbox(path: path)
        _ = try await outbox.post("/customers", body: ["name": "Jana"])
        let running = Task { await outbox.run() }
        // Waits for the condition, not for time: each round writes the journal with fsync, slow on a busy disk.
        let deadline = Date().addingTimeInterval(20)
        while outbox.status.count > 0, Date() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        XCTAssertEqual(outbox.status.count, 0)
        XCTAssertEqual(h.sleeps.all, [1, 9], "a doubling delay, then the server's Retry-After")
        running.cancel()
        await running.value
        XCTAssertEqual(h.requests.count, 4)
    }
}

/// Answers every punch batch with a result per punch, refusing the ids it was told to: a `ScriptedTransport` whose
/// handler reads the batch.
final class BatchAnswering: Sendable {
    private let refused: Locked<[String: (Int, String)]>
    let transport: ScriptedTransport

    init(refusing: [String: (Int, String)]) {
        let refused = Locked(refusing)
        self.refused = refused
        transport = ScriptedTransport { request in
            let refused = refused.withLock { $0 }
            let punches = (try? JSONCoding.decoder.decode(JSONValue.self, from: request.body ?? Data()))?["punches"]?.arrayValue ?? []
            let results: [JSONValue] = punches.map { punch in
                let id = punch["id"]?.stringValue ?? ""
                if let (status, code) = refused[id] {
                    return ["id": .string(id), "status": .integer(status),
                            "problem": ["code": .string(code), "title": "Refused", "status": .integer(status)]]
                }
                return ["id": .string(id), "status": 201, "punch": ["id": .string(id), "state": "working"]]
            }
            return .respond(APIResponse(
                status: 200, headers: ["Content-Type": "application/json"],
                data: try JSONCoding.encode(JSONValue.object(["results": .array(results)]))))
        }
    }

    var requests: [HTTPRequest] { transport.requests }

    func refuse(_ id: String, _ status: Int, _ code: String) { refused.withLock { $0[id] = (status, code) } }
}
