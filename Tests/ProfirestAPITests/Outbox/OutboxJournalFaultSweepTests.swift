import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// Every file operation of the outbox journal failed in turn (issue 28, item 5): a scripted life — writes handed in
/// while the server holds them back, a drain once it takes them, compactions after each settlement, a new process on
/// the file — is run once per (operation, N) for every N up to the count of that operation in a fault-free life, the
/// Nth failing with the error a full or failing disk gives. After each run: every write the outbox accepted reached
/// the server; none it refused did; each refusal was a `StorageError`; the file still opens and drains.
final class OutboxJournalFaultSweepTests: XCTestCase, OutboxTesting {
    typealias Operation = OutboxJournal.TestHooks.Operation
    var directory: URL!

    override func setUpWithError() throws { directory = try Self.makeOutboxDirectory() }
    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    /// Counts the journal's operations by kind and fails the chosen one.
    final class Faults: @unchecked Sendable {
        private let lock = NSLock()
        private var counted: [Operation: Int] = [:]
        private let plan: (Operation, Int)?

        init(_ plan: (Operation, Int)?) { self.plan = plan }

        var counts: [Operation: Int] { lock.withLock { counted } }

        func decide(_ operation: Operation) -> StorageError? {
            let chosen: Bool = lock.withLock {
                counted[operation, default: 0] += 1
                return plan.map { $0.0 == operation && $0.1 == counted[operation] } ?? false
            }
            guard chosen else { return nil }
            switch operation {
            case .lock: return FaultyStorage.realisticError(.lock, path: "outbox.json.lock")
            case .read: return FaultyStorage.realisticError(.read, path: "outbox.json")
            case .write, .sync, .replace: return FaultyStorage.realisticError(.write, path: "outbox.json")
            }
        }
    }

    /// A server that answers 503 until it is opened, then records each POST's Idempotency-Key and answers 201.
    final class Server: @unchecked Sendable {
        let isOpen = Locked(false)
        let received = Locked<[String]>([])

        func answer(_ request: HTTPRequest) -> Step {
            guard isOpen.withLock({ $0 }) else { return .respond(APIResponse(status: 503)) }
            received.withLock { $0.append(request.headers["Idempotency-Key"] ?? "?") }
            return .respond(APIResponse(status: 201, headers: ["Content-Type": "application/json"], data: Data("{}".utf8)))
        }
    }

    func testEveryJournalOperationFailedInTurn() async throws {
        let counting = Faults(nil)
        let clean = await live(counting, run: 0)
        XCTAssertEqual(clean.violations, [], "the fault-free life")
        let counts = counting.counts
        for operation in Operation.allCases {
            XCTAssertGreaterThan(counts[operation] ?? 0, 0, "a life reaches \(operation)")
        }
        var failures: [String] = []
        var runs = 0
        var surfaced = 0
        for operation in Operation.allCases {
            for n in stride(from: 1, through: counts[operation] ?? 0, by: 1) {
                runs += 1
                let report = await live(Faults((operation, n)), run: runs)
                surfaced += report.surfaced
                failures += report.violations.map { "\(operation) #\(n): \($0)" }
            }
        }
        print("outbox journal fault sweep: operations \(counts.map { "\($0.key)=\($0.value)" }.sorted()), runs \(runs), "
              + "refusals surfaced \(surfaced), broken invariants \(failures.count)")
        XCTAssertEqual(failures, [], "\(failures.count) broken invariants")
        XCTAssertGreaterThan(surfaced, 0, "some faults were reported to the caller")
    }

    struct Report {
        var violations: [String] = []
        var surfaced = 0
    }

    private func live(_ faults: Faults, run: Int) async -> Report {
        var report = Report()
        let path = directory.appendingPathComponent("outbox-\(run).json").path
        let server = Server()
        let api = ProfirestApi(options: .init(
            baseURL: "https://api.mujprofirest.cz", accessToken: "at_test", retries: 0,
            transport: ScriptedTransport { server.answer($0) }))
        var hooks = OutboxJournal.TestHooks()
        hooks.fault = { faults.decide($0) }
        hooks.compactionMinimum = 1
        func open() -> Outbox? {
            do { return try Outbox(core: api.core, path: path, capacity: 100, onFailure: nil, hooks: hooks) } catch {
                if !(error is StorageError) { report.violations.append("opening: \(error)") }
                report.surfaced += 1
                return nil
            }
        }
        guard let outbox = open() ?? open() else {
            report.violations.append("the outbox did not open after the fault")
            return report
        }

        // Handed in while the server answers 503: each is queued, or refused with the storage's error.
        var accepted: [String] = []
        var refused: [String] = []
        for i in 1...4 {
            let key = "sweep-\(run)-\(i)"
            do {
                _ = try await outbox.post("/customers", body: ["name": JSONValue.string("Write \(i)")], idempotencyKey: key)
                accepted.append(key)
            } catch is StorageError {
                refused.append(key)
                report.surfaced += 1
            } catch {
                report.violations.append("post \(i): not a storage error: \(error)")
            }
        }

        // The server takes them: drained in order, each settled and compacted away.
        server.isOpen.withLock { $0 = true }
        for _ in 1...3 {
            if await outbox.flush().count == 0 { break }
        }

        // A new process on the file, without faults: it opens, and nothing it finds is lost or sent twice.
        do {
            let next = try Outbox(core: api.core, path: path, capacity: 100, onFailure: nil)
            let left = await next.flush()
            if left.count > 0 { report.violations.append("\(left.count) writes still waiting in the file") }
        } catch {
            report.violations.append("the file no longer opens: \(error)")
        }
        let received = Set(server.received.withLock { $0 })
        let lost = accepted.filter { !received.contains($0) }
        if !lost.isEmpty { report.violations.append("accepted but never sent: \(lost)") }
        let ghosts = refused.filter { received.contains($0) }
        if !ghosts.isEmpty { report.violations.append("refused to the caller but sent: \(ghosts)") }
        return report
    }
}
