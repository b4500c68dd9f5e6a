import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// What the outbox tests share: a journal file in a directory of the test's own (made in `setUpWithError`, removed
/// in `tearDown`), punches to hand in or to seed as an earlier run left them, and `BatchAnswering`.
protocol OutboxTesting: XCTestCase {
    var directory: URL! { get }
}

extension OutboxTesting {
    /// A new, empty directory for one test's journal.
    static func makeOutboxDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    var path: String { directory.appendingPathComponent("outbox.json").path }
    var offline: Step { Step.fail(URLError(.notConnectedToInternet)) }

    /// The writes in the file as a new process would read them.
    func journal() throws -> [JournalEntry] {
        try OutboxJournal(path: path).snapshot
    }

    func punch(_ type: String = "clock_in", pin: String = "1234") -> AttendancePunchCreate {
        AttendancePunchCreate(id: ProfirestApi.uuid(), type: type, credential: StaffCredential(method: "pin", secret: pin))
    }

    /// Punches in the journal as an earlier run left them, never sent (so no batch of theirs was begun).
    func seed(_ punches: [AttendancePunchCreate]) throws {
        let journal = try OutboxJournal(path: path)
        for var p in punches {
            p.occurredAt = Harness.now
            try journal.add(JournalEntry(
                id: p.id, kind: "punch", path: "/restaurants/11/attendance/punches", restaurantID: "11",
                body: try JSONCoding.encode(p), contentType: "application/json", enqueuedAt: Harness.now, attempts: 0,
                lastErrorCode: nil)) { _ in }
        }
    }

    /// The ids of the punches in a batch request.
    func punches(in request: HTTPRequest) -> [String] {
        let batch = try? JSONCoding.decoder.decode(JSONValue.self, from: request.body ?? Data())
        return batch?["punches"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
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
