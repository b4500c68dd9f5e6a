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

    /// The writes in the file as a new process would read them.
    private func journal() throws -> [JournalEntry] {
        try OutboxJournal(path: path).snapshot
    }

    private func punch(_ type: String = "clock_in", pin: String = "1234") -> AttendancePunchCreate {
        AttendancePunchCreate(id: ProfirestApi.uuid(), type: type, credential: StaffCredential(method: "pin", secret: pin))
    }

    /// Punches in the journal as an earlier run left them, never sent (so no batch of theirs was begun).
    private func seed(_ punches: [AttendancePunchCreate]) throws {
        let journal = try OutboxJournal(path: path)
        for var p in punches {
            p.occurredAt = Harness.now
            try journal.add(JournalEntry(
                id: p.id, kind: "punch", path: "/restaurants/11/attendance/punches", restaurantID: "11",
                body: try JSONCoding.encode(p), contentType: "application/json", enqueuedAt: Harness.now, attempts: 0,
                lastErrorCode: nil)) { _ in }
        }
    }

    private func punches(in request: HTTPRequest) -> [String] {
        let batch = try? JSONCoding.decoder.decode(JSONValue.self, from: request.body ?? Data())
        return batch?["punches"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
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
        let deadline = Date().addingTimeInterval(60)
        while outbox.status.count > 0, Date() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        XCTAssertEqual(outbox.status.count, 0)
        XCTAssertEqual(h.sleeps.all, [1, 2, 9], "after the submit's failure and one more: a doubling delay, then the server's Retry-After")
        running.cancel()
        await running.value
        XCTAssertEqual(h.requests.count, 4)
    }
}

extension OutboxTests {
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

    /// Issue 20, 2: the Retry-After of a write that failed when it was handed in is waited for by `run()`, which does
    /// not send again at once; and while it holds, a new write is journaled without being sent.
    func testTheRetryAfterOfAFailedSubmitIsWaitedFor() async throws {
        let h = Harness(
            [.problem(503, "service_unavailable", headers: ["Retry-After": "9"]), .json(201, ["id": "c1"]), .json(201, ["id": "c2"])],
            accessToken: "at_test")
        let outbox = try h.api.outbox(path: path)
        guard case .queued = try await outbox.post("/customers", body: ["name": "Jana"], idempotencyKey: "k1") else {
            return XCTFail("a 503 keeps it")
        }
        guard case .queued(let second) = try await outbox.post("/customers", body: ["name": "Petr"], idempotencyKey: "k2") else {
            return XCTFail("held by the Retry-After")
        }
        XCTAssertEqual(second.attempts, 0, "not sent while the server's Retry-After holds")
        XCTAssertEqual(h.requests.count, 1)
        let running = Task { await outbox.run() }
        let deadline = Date().addingTimeInterval(60)
        while outbox.status.count > 0, Date() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        running.cancel()
        await running.value
        XCTAssertEqual(h.sleeps.all, [9], "run() waited the server's 9 s before sending again")
        XCTAssertEqual(h.requests.map { $0.header("Idempotency-Key") }, ["k1", "k1", "k2"])
    }

    /// Issue 20, 2: a delay of the outbox's own (no Retry-After) does not hold a new write back — a person's punch is
    /// tried at once — but `run()` still waits it out after the failure.
    func testABackoffDoesNotHoldANewWriteBackButRunWaitsIt() async throws {
        let offline = Step.fail(URLError(.notConnectedToInternet))
        let h = Harness([offline, offline, .json(201, ["id": "c1"]), .json(201, ["id": "c2"])], accessToken: "at_test",
                        retryDelay: 1, random: 0.5)
        let outbox = try h.api.outbox(path: path)
        _ = try await outbox.post("/customers", body: ["n": 1], idempotencyKey: "k1")
        _ = try await outbox.post("/customers", body: ["n": 2], idempotencyKey: "k2")
        XCTAssertEqual(h.requests.map { $0.header("Idempotency-Key") }, ["k1", "k1"], "tried at once, oldest first")
        let running = Task { await outbox.run() }
        let deadline = Date().addingTimeInterval(60)
        while outbox.status.count > 0, Date() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        running.cancel()
        await running.value
        XCTAssertEqual(h.sleeps.all, [2], "the second failure's doubled delay, once")
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

/// Answers every punch batch with a result per punch, refusing the ids it was told to: a `ScriptedTransport` whose
/// handler reads the batch.
final class BatchAnswering: Sendable {
    private let refused: Locked<[String: (Int, String, Int?)]>
    let transport: ScriptedTransport

    convenience init(refusing: [String: (Int, String)]) {
        self.init(refusingWithSeconds: refusing.mapValues { ($0.0, $0.1, nil) })
    }

    init(refusingWithSeconds refusing: [String: (Int, String, Int?)]) {
        let refused = Locked(refusing)
        self.refused = refused
        transport = ScriptedTransport { request in
            let refused = refused.withLock { $0 }
            let punches = (try? JSONCoding.decoder.decode(JSONValue.self, from: request.body ?? Data()))?["punches"]?.arrayValue ?? []
            let results: [JSONValue] = punches.map { punch in
                let id = punch["id"]?.stringValue ?? ""
                if let (status, code, seconds) = refused[id] {
                    var problem: JSONValue = ["code": .string(code), "title": "Refused", "status": .integer(status)]
                    if let seconds { problem = ["code": .string(code), "title": "Refused", "status": .integer(status),
                                                "retry_after": .integer(seconds)] }
                    return ["id": .string(id), "status": .integer(status), "problem": problem]
                }
                return ["id": .string(id), "status": 201, "punch": ["id": .string(id), "state": "working"]]
            }
            return .respond(APIResponse(
                status: 200, headers: ["Content-Type": "application/json"],
                data: try JSONCoding.encode(JSONValue.object(["results": .array(results)]))))
        }
    }

    var requests: [HTTPRequest] { transport.requests }

    func refuse(_ id: String, _ status: Int, _ code: String, retryAfter: Int? = nil) {
        refused.withLock { $0[id] = (status, code, retryAfter) }
    }
}
