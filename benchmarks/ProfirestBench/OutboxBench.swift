// make bench's outbox part (`--only outbox`): what a durable write costs, against the sandbox (without --validate,
// in memory). Keys:
//
//   outbox_enqueue_ms_p50, outbox_enqueue_ms_p99
//       one write handed to the outbox (POST /v2/customers, ~25-byte body) while the server's Retry-After holds the
//       queue back, so the write is journaled (an appended record, fsync) and not sent: the journal's cost per
//       enqueue, `--outbox-writes` (10 000) times in a row.
//   outbox_fsync_only_ms_p50, outbox_fsync_only_ms_p99
//       a line of about the same length (240 bytes) appended to a file beside the journal and fsync'd (FileHandle.synchronize), alternating with the enqueues:
//       what the disk alone takes for the sync each enqueue must wait for (on this shared machine it moves from
//       0.2 to 4 ms with the other users' writes), so the enqueue's own cost is the difference.
//   outbox_drain_10000_seconds
//       `flush()` of those writes by a new outbox on the journal (an app started again after the outage): sent one at
//       a time, in order, each settled in the journal. Measured in `--outbox-rounds` (5) rounds that alternate with
//       the plain POSTs below, so that both sides see the same machine: each round a new outbox drains its share
//       (2,000) and a 503 with an hour's Retry-After on the next one stops it there (that write, not committed,
//       goes first in the next round: 4 requests more than the plain side in all). The seconds are the sum of the
//       rounds' flush() calls.
//   outbox_drain_http_only_seconds, outbox_drain_overhead_ratio
//       the same number of POSTs through `api.post` with their own keys, no outbox, in the same rounds (after each
//       round's drain): what the requests alone cost, and the ratio of the two sums. Both sides' requests pass the
//       same sandbox fault (a delay of 0 ms for the round's count, which is how the drain's stop is placed), so
//       the server does the same work for each.
//   outbox_journal_after_enqueue_mb, outbox_journal_max_mb, outbox_journal_bound_mb
//       the journal file after the enqueues, the largest it was at any moment of the part (sampled every 5 ms and
//       after each phase), and the bound the compaction keeps: twice the live records plus 1 MiB.
import Foundation
import ProfirestAPI
#if canImport(Glibc)
import Glibc
#endif

func outboxResults(_ arguments: [String]) async throws -> [String: Any] {
    let writes = arguments.firstIndex(of: "--outbox-writes").flatMap { Int(arguments[$0 + 1]) } ?? 10_000
    let sandbox = try Sandbox(python: Sandbox.defaultPython)
    defer { sandbox.stop() }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("profirest-outbox-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let tokens = directory.appendingPathComponent("tokens.json").path
    let path = directory.appendingPathComponent("outbox.json").path
    try await sandbox.pairDevice(clientID: "profirest-pos", storage: FileTokenStorage(path: tokens))
    let api = ProfirestApi(options: .init(
        baseURL: sandbox.api, clientID: "profirest-pos", language: "en", storage: FileTokenStorage(path: tokens)))
    let outbox = try api.outbox(path: path, capacity: writes + 1)
    let sampler = FileSizeSampler(path: path)
    defer { sampler.stop() }

    // The first write meets a 503 with an hour's Retry-After: the queue is held, the rest are only journaled.
    try await sandbox.admin("POST", "faults", [
        "method": "POST", "path": "/v2/customers", "count": 1, "action": "status", "status": 503, "retry_after": "3600",
    ])
    _ = try await outbox.post("/customers", body: ["name": "Bench 0"], idempotencyKey: "bench-0")
    var enqueue: [Double] = []
    var fsyncOnly: [Double] = []
    let sidePath = directory.appendingPathComponent("fsync-only").path
    _ = FileManager.default.createFile(atPath: sidePath, contents: nil, attributes: [.posixPermissions: 0o600])
    let side = try FileHandle(forWritingTo: URL(fileURLWithPath: sidePath))
    defer { try? side.close() }
    let line = Data(repeating: UInt8(ascii: "x"), count: 240)  // about an enqueue's record
    for i in 1..<writes {
        let start = DispatchTime.now().uptimeNanoseconds
        guard case .queued = try await outbox.post("/customers", body: ["name": .string("Bench \(i)")], idempotencyKey: "bench-\(i)") else {
            throw BenchFailure("an enqueue was sent during the hold")
        }
        enqueue.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        let syncStart = DispatchTime.now().uptimeNanoseconds
        // Appended and synced as the journal does (fsync; FlushFileBuffers on Windows).
        try side.seekToEnd()
        try side.write(contentsOf: line)
        try side.synchronize()
        fsyncOnly.append(Double(DispatchTime.now().uptimeNanoseconds - syncStart) / 1e6)
    }
    sampler.sample()
    let afterEnqueue = sampler.largest
    FileHandle.standardError.write(Data("outbox: \(writes) enqueued, draining…\n".utf8))

    // The outbox that met the hold honours its hour; each drain is an app started again after the outage: a new
    // outbox on the same journal (made before its timer starts: opening reads the journal).
    let rounds = max(1, arguments.firstIndex(of: "--outbox-rounds").flatMap { Int(arguments[$0 + 1]) } ?? 5)
    var drain = 0.0
    var http = 0.0
    var drained = 0
    var plain = 0
    for round in 0..<rounds {
        let share = round == rounds - 1 ? writes - drained : writes / rounds
        // The round's share passes a no-op fault; the write after it meets the hour's 503 and stops the drain.
        try await sandbox.admin("POST", "faults", [
            "method": "POST", "path": "/v2/customers", "count": share, "action": "delay", "delay_ms": 0,
        ])
        if round < rounds - 1 {
            try await sandbox.admin("POST", "faults", [
                "method": "POST", "path": "/v2/customers", "count": 1, "action": "status", "status": 503,
                "retry_after": "3600",
            ])
        }
        let drainer = try api.outbox(path: path, capacity: writes + 1)
        let drainStart = DispatchTime.now().uptimeNanoseconds
        let left = await drainer.flush()
        drain += Double(DispatchTime.now().uptimeNanoseconds - drainStart) / 1e9
        sampler.sample()
        drained += share
        guard left.count == writes - drained else {
            throw BenchFailure("round \(round) left \(left.count) writes, not \(writes - drained): \(String(describing: left.lastFailure))")
        }

        try await sandbox.admin("POST", "faults", [
            "method": "POST", "path": "/v2/customers", "count": share, "action": "delay", "delay_ms": 0,
        ])
        let httpStart = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<share {
            let _: JSONValue = try await api.post("/customers", body: ["name": .string("Plain \(plain)")], options: .init(idempotencyKey: .key("plain-\(plain)")))
            plain += 1
        }
        http += Double(DispatchTime.now().uptimeNanoseconds - httpStart) / 1e9
    }
    let committed = try await commitsByKey(sandbox).filter { $0.key.hasPrefix("bench-") }
    guard committed.count == writes, committed.values.allSatisfy({ $0 == 1 }) else {
        throw BenchFailure("the drain committed \(committed.count) keys of \(writes)")
    }
    sampler.stop()

    let sorted = enqueue.sorted()
    let syncs = fsyncOnly.sorted()
    let mb = { (bytes: Int) in rounded(Double(bytes) / 1_048_576) }
    let results: [String: Any] = [
        "outbox_enqueue_ms_p50": rounded(sorted[sorted.count / 2]),
        "outbox_enqueue_ms_p99": rounded(sorted[sorted.count * 99 / 100]),
        "outbox_fsync_only_ms_p50": rounded(syncs[syncs.count / 2]),
        "outbox_fsync_only_ms_p99": rounded(syncs[syncs.count * 99 / 100]),
        "outbox_drain_\(writes)_seconds": rounded(drain),
        "outbox_drain_http_only_seconds": rounded(http),
        "outbox_drain_overhead_ratio": rounded(drain / http),
        "outbox_journal_after_enqueue_mb": mb(afterEnqueue),
        "outbox_journal_max_mb": mb(sampler.largest),
        "outbox_journal_bound_mb": mb(2 * afterEnqueue + 1_048_576),
        "outbox_bench_setup": "sandbox without --validate (in-memory SQLite) on loopback; \(writes) POST /v2/customers "
            + "(~25-byte JSON bodies) journaled while a 503 with Retry-After: 3600 holds the queue (fsync per "
            + "enqueue), then flush() by a new outbox sends them one at a time, in \(rounds) rounds alternating with "
            + "as many api.post calls for the requests' own cost (ratio of the sums); the journal's size sampled every "
            + "5 ms",
    ]
    for key in results.keys.sorted() { print(key, results[key]!) }
    return results
}

/// The largest size a file reached, sampled every 5 ms on a thread of its own (and whenever asked).
final class FileSizeSampler: @unchecked Sendable {
    private let path: String
    private let lock = NSLock()
    private var maximum = 0
    private var running = true

    init(path: String) {
        self.path = path
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                sample()
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
    }

    func sample() {
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
        lock.withLock { maximum = max(maximum, size) }
    }

    var largest: Int { lock.withLock { maximum } }

    func stop() { lock.withLock { running = false } }
}
