// make soak: writes through the outbox against the sandbox's fault injection, counted from the sandbox's own
// records (GET /_sandbox/commits), and SIGKILLed writer processes that a restart must finish. Every key a count:
//
//   writes_sent, writes_recorded, writes_duplicated, writes_lost, writes_failed_to_caller
//       `--writes` customers (POST /v2/customers, which the sandbox does not de-duplicate by content) through one
//       outbox, 8 writers at once, 30 % random faults on every POST (drop before/after the commit, 503 with and
//       without Retry-After, 429 with Retry-After, close after the answer, a truncated answer, a 200 of garbage), a
//       sandbox restart and an expiry of the access token half way; then the outbox is flushed until empty.
//   body_mismatch_under_key   requests the sandbox saw whose body differed from the first under the same key
//   outbox_kill_trials, outbox_kills_inside_append, outbox_kills_inside_compaction, outbox_lost, outbox_duplicated
//       `--kill-trials` times: a writer process (`--soak-writer`) hands writes to an outbox file and is SIGKILLed; a
//       second writer process on the same file delivers what was left. One trial in four kills it at a random
//       moment from outside; the others make it SIGKILL itself at a chosen point of its journal (`--kill-at`, which
//       the writer hands to the library's SPI `ProfirestApi.outbox(path:killPoint:compactionBytes:)`): half way
//       through writing its N-th appended record, or in its N-th compaction just before or just after the new file
//       replaces the journal — with compactions made frequent (`--compact-bytes 2048`). Lost = accepted by the
//       outbox (journaled) but never recorded;
//       duplicated = recorded twice under one key.
//   events_*   the event feed read through stream cuts, outages, polling phases and cursor expiries, counted by
//       event id: SoakEvents.swift (`--events`, 100 000; the cuts and outages scale with it).
//   refresh_*, token_file_corruptions
//       processes on one token file, killed at random during refreshes that meet dropped connections (SoakRefresh.swift)
//   storage_fault*
//       a device's life on a token file failing 1 % of its operations, restarts checking what was stored
//       (SoakStorageFaults.swift; `--storage-faults`, 1,000 faults)
//   replica_*
//       replica processes of a partner's backend on one PostgreSQL, a strict server, tokens expiring every few
//       seconds, replicas killed at random (SoakReplicas.swift; `--only replica` runs these trials alone)
//
// The sandbox runs without --validate (cost), with an in-memory database; its stdin ties its life to ours.
import Foundation
@_spi(OutboxCrashTesting) import ProfirestAPI
import ProfirestTestSupport

struct SoakSettings {
    var writes = 10_000
    var killTrials = 100
    var events = 100_000
    /// `--storage-faults`: how many storage operations the storage part fails (1 % of them) before it ends.
    var storageFaults = 1_000
    var writers = 8
    var refresh = RefreshSoakSettings()
    var replica: ReplicaSoakSettings
    /// `--only replica`: the replica trials alone.
    var only: String?
    var output = "benchmarks/results/soak.json"
    var python = Sandbox.defaultPython

    init(_ arguments: [String]) {
        replica = ReplicaSoakSettings(arguments)
        var i = 1
        while i + 1 < arguments.count {
            let value = arguments[i + 1]
            switch arguments[i] {
            case "--writes": writes = Int(value) ?? writes
            case "--kill-trials": killTrials = Int(value) ?? killTrials
            case "--refresh-seconds": refresh.seconds = Double(value) ?? refresh.seconds
            case "--refresh-kills": refresh.kills = Int(value) ?? refresh.kills
            case "--events": events = Int(value) ?? events
            case "--storage-faults": storageFaults = Int(value) ?? storageFaults
            case "--output": output = value
            case "--python": python = value
            case "--only": only = value
            default: i -= 1
            }
            i += 2
        }
    }
}

let soakClient = "profirest-pos"
func soakFaults() -> [String: Any] { [
    "action": "random", "rate": 0.3, "method": "POST", "path": "/v2/*", "count": NSNull(), "seed": 14,
    "mix": ["drop_before", "drop_after", "status:503", "status:429", "close_after_response", "truncate", "garbage"],
] }

/// The storage part's targets it missed: no pairing or state lost, no spent refresh token presented, every fault
/// injected, and every faulted call ending in a clear error.
func storageFaultMisses(_ results: [String: Any], _ settings: SoakSettings) -> [String] {
    var bad = ["storage_fault_unpairings", "storage_fault_lost", "storage_fault_spent_refresh_tokens", "storage_fault_unclear_errors"]
        .filter { (results[$0] as? Int ?? 1) != 0 }
    if (results["storage_faults_injected"] as? Int ?? 0) < settings.storageFaults { bad.append("storage_faults_injected") }
    return bad
}

func runSoak(_ arguments: [String]) async throws {
    let settings = SoakSettings(arguments)
    if settings.only == "storage" {
        let sandbox = try Sandbox(python: settings.python)
        defer { sandbox.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("profirest-soak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let results = try await soakStorageFaults(sandbox, faults: settings.storageFaults, directory: directory)
        try merge(results, into: settings.output)
        for key in results.keys.sorted() { print(key, results[key]!) }
        let bad = storageFaultMisses(results, settings)
        if !bad.isEmpty { throw BenchFailure("soak targets missed: \(bad)") }
        return
    }
    if let only = settings.only {
        guard only == "replica" else { throw BenchFailure("--only: the soak has two parts to run alone, replica and storage") }
        let results = try await soakReplicas(settings.replica, python: settings.python) ?? [:]
        try merge(results, into: settings.output)
        for key in results.keys.sorted() { print(key, results[key]!) }
        let bad = results.isEmpty ? [] : replicaMisses(results, settings.replica)
        if !bad.isEmpty { throw BenchFailure("soak targets missed: \(bad)") }
        return
    }
    let sandbox = try Sandbox(python: settings.python)
    defer { sandbox.stop() }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("profirest-soak-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let tokens = directory.appendingPathComponent("tokens.json").path
    try await sandbox.pairDevice(clientID: soakClient, storage: FileTokenStorage(path: tokens))
    try await sandbox.admin("POST", "faults", soakFaults())

    var results = try await soakWrites(sandbox, settings: settings, tokens: tokens, outbox: directory.appendingPathComponent("outbox.json").path)
    for (key, value) in try await soakKills(sandbox, settings: settings, tokens: tokens, directory: directory) { results[key] = value }
    let events = try await soakEvents(
        sandbox, events: settings.events, cuts: max(10, settings.events / 500), outages: max(2, settings.events / 10_000),
        storage: directory.appendingPathComponent("events-tokens.json").path)
    results.merge(events) { $1 }
    for (key, value) in try await soakRefresh(sandbox, settings.refresh, directory: directory) { results[key] = value }
    let storageFaults = try await soakStorageFaults(sandbox, faults: settings.storageFaults, directory: directory)
    results.merge(storageFaults) { $1 }
    let replicas = try await soakReplicas(settings.replica, python: settings.python) ?? [:]
    results.merge(replicas) { $1 }
    let stats = try await sandbox.admin("GET", "stats")
    results["body_mismatch_under_key"] = stats["body_mismatch_under_key"] as? Int ?? -1
    results["faults_triggered"] = stats["faults_triggered"] as? Int ?? -1
    results["soak_setup"] = "sandbox without --validate; 30 % random faults on every POST (\(soakFaults()["mix"]!)); "
        + "\(settings.writers) writers; restart and token expiry half way"
    try merge(results, into: settings.output)
    for key in results.keys.sorted() { print(key, results[key]!) }
    var bad = [
        "writes_lost", "writes_duplicated", "outbox_lost", "outbox_duplicated", "body_mismatch_under_key",
        "token_file_corruptions", "refresh_invalid_grant", "events_gaps", "events_duplicates_after_ack",
    ].filter { (results[$0] as? Int ?? 1) != 0 }
    bad += storageFaultMisses(results, settings)
    if (results["refresh_stall_max_s"] as? Double ?? 99) > 5 { bad.append("refresh_stall_max_s") }
    if !replicas.isEmpty { bad += replicaMisses(replicas, settings.replica) }
    // The paths the event part exists for must have been taken, or its zeros prove nothing.
    for reached in ["events_polling_phases", "events_cursor_resets"] where (results[reached] as? Int ?? 0) < 1 {
        bad.append(reached)
    }
    // With four trials or more, kills inside an append and inside a compaction must have happened.
    for reached in ["outbox_kills_inside_append", "outbox_kills_inside_compaction"]
    where settings.killTrials >= 4 && (results[reached] as? Int ?? 0) < 1 {
        bad.append(reached)
    }
    if !bad.isEmpty || (results["writes_recorded"] as? Int) != settings.writes {
        throw BenchFailure("soak targets missed: \(bad), recorded \(results["writes_recorded"]!) of \(settings.writes)")
    }
}

/// Commits per Idempotency-Key of this device, from the sandbox's ledger.
func commitsByKey(_ sandbox: Sandbox) async throws -> [String: Int] {
    let ledger = try await sandbox.admin("GET", "commits?full=1")
    var counts: [String: Int] = [:]
    for (_, keys) in ledger["by_key"] as? [String: Any] ?? [:] {
        for (key, n) in keys as? [String: Any] ?? [:] { counts[key, default: 0] += n as? Int ?? 0 }
    }
    return counts
}

/// `settings.writes` customers through one outbox, then flushes until nothing waits.
func soakWrites(_ sandbox: Sandbox, settings: SoakSettings, tokens: String, outbox path: String) async throws -> [String: Any] {
    let api = ProfirestApi(options: .init(
        baseURL: sandbox.api, clientID: soakClient, language: "en", storage: FileTokenStorage(path: tokens),
        retryDelay: 0.05, timeout: 5))
    let outbox = try api.outbox(path: path, capacity: settings.writes + 1)
    let failed = Counter()
    let restarts = Counter()
    let expiries = Counter()
    let perWriter = settings.writes / settings.writers
    let total = perWriter * settings.writers
    try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<settings.writers {
            group.addTask {
                for i in 0..<perWriter {
                    if writer == 0, i == perWriter / 2 {
                        // Counted: a restart or expiry the sandbox refused would leave those faults untested.
                        if (try? await sandbox.admin("POST", "restart", ["down_ms": 300])) != nil { restarts.add() }
                        if (try? await sandbox.admin("POST", "tokens/expire", ["client_id": soakClient])) != nil { expiries.add() }
                    }
                    do {
                        _ = try await outbox.post("/customers", body: ["name": .string("Soak \(writer)-\(i)")], idempotencyKey: "soak-\(writer)-\(i)")
                    } catch {
                        failed.add()
                    }
                }
            }
        }
        try await group.waitForAll()
    }
    // Each flush goes until a write gets no definitive answer (the order), so at 30 % faults a round delivers two or
    // three; and while a server's Retry-After held the queue, writes handed in were only journaled. Flushed until
    // empty, for at most ten minutes.
    var rounds = 0
    let deadline = Date().addingTimeInterval(600)
    while outbox.status.count > 0, Date() < deadline {
        rounds += 1
        let status = await outbox.flush()
        if status.count > 0 { try await Task.sleep(nanoseconds: 20_000_000) }
    }
    let commits = try await commitsByKey(sandbox).filter { $0.key.hasPrefix("soak-") }
    return [
        "writes_sent": total,
        "writes_recorded": commits.count,
        "writes_duplicated": commits.values.filter { $0 > 1 }.count,
        "writes_lost": total - commits.count - failed.value,
        "writes_failed_to_caller": failed.value,
        "writes_left_in_outbox": outbox.status.count,
        "writes_flush_rounds_after": rounds,
        "sandbox_restarts": restarts.value,
        "token_expiries": expiries.value,
    ]
}

/// Kill trials: a writer SIGKILLed at a random moment or at a kill point inside its journal, a second writer on the
/// same outbox file finishing.
func soakKills(_ sandbox: Sandbox, settings: SoakSettings, tokens: String, directory: URL) async throws -> [String: Any] {
    var lost = 0
    var duplicated = 0
    var accepted = 0
    var insideAppend = 0
    var insideCompaction = 0
    let compactOften = ["--compact-bytes", "2048"]
    for trial in 0..<settings.killTrials {
        let outbox = directory.appendingPathComponent("kill-\(trial).json").path
        let prefix = "kill-\(trial)-"
        // 300 writes append about 600 records (each its own and its outcome) and, at 2 KB, compact some 40 times.
        let point: String? = switch trial % 4 {
        case 1: "append:\(Int.random(in: 2...200))"
        case 2: "compaction:\(Int.random(in: 1...10))"
        case 3: "compacted:\(Int.random(in: 1...10))"
        default: nil
        }
        let killAt = point.map { ["--kill-at", $0] } ?? []
        let first = try writerProcess(sandbox, tokens: tokens, outbox: outbox, prefix: prefix, writes: 300, extra: compactOften + killAt)
        if point == nil {
            try await Task.sleep(nanoseconds: UInt64.random(in: 5_000_000...300_000_000))
            ProcessControl.kill(first.process)
        }
        first.process.waitUntilExit()
        if let point, ProcessControl.wasKilled(first.process) {
            if point.hasPrefix("append") { insideAppend += 1 } else { insideCompaction += 1 }
        }
        let keys = first.lines()
        let second = try writerProcess(sandbox, tokens: tokens, outbox: outbox, prefix: prefix, writes: 0, extra: compactOften)
        second.process.waitUntilExit()
        let commits = try await commitsByKey(sandbox).filter { $0.key.hasPrefix(prefix) }
        accepted += keys.count
        lost += keys.filter { commits[$0] == nil }.count
        duplicated += commits.values.filter { $0 > 1 }.count
    }
    return ["outbox_kill_trials": settings.killTrials, "outbox_lost": lost, "outbox_duplicated": duplicated,
            "outbox_accepted_in_kill_trials": accepted, "outbox_kills_inside_append": insideAppend,
            "outbox_kills_inside_compaction": insideCompaction]
}

/// A child process of the soak whose standard output is read in whole lines once it has ended — also after a
/// SIGKILL, so what it printed before the kill is still there.
final class LineProcess: @unchecked Sendable {
    let process = Process()
    private let output = Pipe()

    init(_ executable: String, arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Every complete, non-empty line it printed; waits for the end of its output.
    func lines() -> [String] {
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }
}

/// A `--soak-writer` child: its stdout names each key the outbox accepted, one a line. `extra` passes its crash
/// points (`--kill-at`, `--compact-bytes`).
func writerProcess(
    _ sandbox: Sandbox, tokens: String, outbox: String, prefix: String, writes: Int, extra: [String] = []
) throws -> LineProcess {
    try LineProcess(CommandLine.arguments[0], arguments: [
        "--soak-writer", "--api", sandbox.api, "--tokens", tokens, "--outbox", outbox, "--prefix", prefix,
        "--writes", String(writes),
    ] + extra)
}

/// The child of a kill trial: hands `--writes` customers to the outbox (printing each accepted key), then delivers
/// everything the outbox file holds; `--kill-at` and `--compact-bytes` set its journal's crash points.
func runSoakWriter(_ arguments: [String]) async throws {
    func value(_ name: String) -> String { arguments.value(after: name) ?? "" }
    let api = ProfirestApi(options: .init(
        baseURL: value("--api"), clientID: soakClient, language: "en", storage: FileTokenStorage(path: value("--tokens")),
        retryDelay: 0.05, timeout: 5))
    let outbox = try api.outbox(
        path: value("--outbox"), killPoint: arguments.value(after: "--kill-at"),
        compactionBytes: arguments.value(after: "--compact-bytes").flatMap { Int($0) })
    for i in 0..<(Int(value("--writes")) ?? 0) {
        let key = value("--prefix") + String(i)
        _ = try await outbox.post("/customers", body: ["name": .string("Kill \(key)")], idempotencyKey: key)
        FileHandle.standardOutput.write(Data((key + "\n").utf8))
    }
    while outbox.status.count > 0 {
        if await outbox.flush().count > 0 { try await Task.sleep(nanoseconds: 20_000_000) }
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
