import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport
import ProfirestTesting

/// `Outbox.swift` over a scripted transport: journaled before the first attempt, removed only on a definitive answer,
/// replayed in order with the same bytes, checked when handed in, bounded, and `run()`'s waits. (What one delivery
/// round does — batches, keep or refuse: OutboxDeliveryTests.)
final class OutboxTests: XCTestCase, OutboxTesting {
    var directory: URL!

    override func setUpWithError() throws { directory = try Self.makeOutboxDirectory() }

    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    // These three run on the testing kit's server (ProfirestTesting), as an app's test of its outbox would.

    func testAWriteIsJournaledBeforeItsAttemptAndLeavesWithTheAnswer() async throws {
        let server = ProfirestTestServer()
        server.answer("POST", "/v2/customers", with: .drop)
        let outbox = try server.pairedClient().outbox(path: path)
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
        let requests = server.requests("POST", "/v2/customers")
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertEqual(requests.map { $0.header("Idempotency-Key") }, ["key-1", "key-1"])
        XCTAssertEqual(requests[0].body, requests[1].body, "the same bytes every time")
        XCTAssertNil(requests[1].header("Profirest-Staff-Token"))
    }

    func testDeliveredAtOnceWhenNothingWaits() async throws {
        let server = ProfirestTestServer()
        let outbox = try server.pairedClient().outbox(path: path)
        let outcome = try await outbox.post("/customers", body: ["name": "Jana"])
        let created = try XCTUnwrap(Fixtures.fixture("POST", "/v2/customers")).decode(as: JSONValue.self)
        XCTAssertEqual(outcome, .delivered(created))
        XCTAssertEqual(outbox.status.count, 0)
        XCTAssertEqual(server.requests.first?.header("Idempotency-Key")?.isEmpty, false)
    }

    func testAQueuedWriteSurvivesARestartAndGoesFirst() async throws {
        let first = ProfirestTestServer()
        first.isOffline = true
        _ = try await first.pairedClient().outbox(path: path).post("/customers", body: ["name": "Older"], idempotencyKey: "k-old")
        // A new process: the journal is read back, and the older write is sent before the new one.
        let server = ProfirestTestServer()
        server.answer("POST", "/v2/customers", with: .fixture, .json(status: 201, ["id": "c2"]))
        let outbox = try server.pairedClient().outbox(path: path)
        XCTAssertEqual(outbox.items.map(\.id), ["k-old"])
        let outcome = try await outbox.post("/customers", body: ["name": "Newer"], idempotencyKey: "k-new")
        XCTAssertEqual(outcome, .delivered(["id": "c2"]))
        XCTAssertEqual(server.requests.map { $0.header("Idempotency-Key") }, ["k-old", "k-new"])
        XCTAssertEqual(first.requests.first?.body, server.requests.first?.body)
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

}
