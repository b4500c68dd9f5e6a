// The replica trials of make soak: a partner's backend as several replica processes (ProfirestRefreshProbe replica)
// on one PostgreSQL of the run's own (PostgresServer), every replica a client for each of the same connections (a
// load balancer sends any restaurant's work to any replica), all on PostgresTokenStorage with a key per connection;
// a sandbox of their own in strict rotation (refresh_grace 0: a refresh token used twice is invalid_grant, which
// unpairs the restaurant), access tokens that expire every few seconds, clients making requests all the while, and
// replicas SIGKILLed at random moments and started again at once.
//
//   replica_kill_trials            replicas SIGKILLed (each replaced at once by a new process)
//   replica_refreshes_per_expiry   refresh grants the sandbox counted ÷ token expiries; an expiry is a grant that
//                                  replaced an access token with less than half its lifetime left, every other grant
//                                  is an extra refresh (the sandbox's refresh_early, replica_extra_refreshes): 1.0
//                                  means each lifetime of each connection was renewed once, by one replica, the others
//                                  adopting its tokens
//   replica_lost_in_flight         connections lost to the one window no client can close without the server's grace:
//                                  their refresh was made by a replica that died after its token request went out and
//                                  before the new tokens were committed to PostgreSQL — its last line for the
//                                  connection `answer` (the server's 200 was in its hands:
//                                  replica_lost_answered_not_stored) or `ask` (the server had rotated the token, its
//                                  answer was on the way: replica_lost_asked_not_answered)
//   replica_invalid_grant          invalid_grant answers (the sandbox's refresh_reuse) not explained so: must be 0
//   replica_window_kills           replicas that ended themselves on purpose right after an answer, before writing it
//                                  (--die-after-answer; one at a time, --replica-window-kills): each must have cost
//                                  its connection, explained so (replica_window_kills_explained) — the window's
//                                  consequence shown on purpose, whatever the random kills happen to hit
//   replica_window_*_ms_p50/p99    the window's width: ask → answer (the server) and answer → stored (the write)
//   replica_server_replays         spent refresh tokens answered again within the grace (0 here; --replica-grace 60
//                                  runs the same trials against the contract's grace: the window then costs nothing)
//
// How the window is shown: each replica appends a line per moment of a token request to a log file of its own, with
// one write(2) each before the library goes on, so the lines a kill cut short are still there (Replica.swift of the
// probe): `ask`, `answer`, `stored` (committed), `invalid_grant`. `ReplicaLogs` reads every connection's lines of all
// replicas in time order and explains an invalid_grant only by a refresh that a dead replica left between `ask` and
// `stored` (see there); any other — and any the sandbox counted that no line accounts for — is replica_invalid_grant.
// The control, --replica-without-lock (the replicas refresh without the lock across processes), must fail there.
//
// Arguments: --replica-processes 4, --replica-connections 250, --replica-kills 100, --replica-seconds 100,
// --replica-token-ttl 4 (seconds an access token lives), --replica-margin 1 (refreshMargin), --replica-interval 2
// (seconds between a client's requests), --replica-window-kills 3, --replica-pool 8 (maximumConnections),
// --replica-grace 0 (the sandbox's refresh_grace). `ProfirestBench --soak --only replica` (make
// soak-replicas) runs these trials alone.
import Foundation
import ProfirestAPI
import ProfirestTestSupport

struct ReplicaSoakSettings {
    var processes = 4
    var connections = 250
    var kills = 100
    var seconds = 100.0
    var tokenSeconds = 4
    var margin = 1.0
    var interval = 2.0
    var windowKills = 3
    /// Each replica's PostgresTokenStorage maximumConnections.
    var pool = 8
    /// The sandbox's refresh_grace: 0, a strict server; --replica-grace 60 shows what the contract's grace saves.
    var grace = 0.0
    /// The control (--replica-without-lock): the replicas refresh without the lock across processes, which must fail.
    var withoutLock = false

    init(_ arguments: [String]) {
        let value = arguments.value(after:)
        processes = value("--replica-processes").flatMap(Int.init) ?? processes
        connections = value("--replica-connections").flatMap(Int.init) ?? connections
        kills = value("--replica-kills").flatMap(Int.init) ?? kills
        seconds = value("--replica-seconds").flatMap(Double.init) ?? seconds
        tokenSeconds = value("--replica-token-ttl").flatMap(Int.init) ?? tokenSeconds
        margin = value("--replica-margin").flatMap(Double.init) ?? margin
        interval = value("--replica-interval").flatMap(Double.init) ?? interval
        windowKills = value("--replica-window-kills").flatMap(Int.init) ?? windowKills
        withoutLock = arguments.contains("--replica-without-lock")
        pool = value("--replica-pool").flatMap(Int.init) ?? pool
        grace = value("--replica-grace").flatMap(Double.init) ?? grace
    }
}

let replicaClient = "moje-aplikace"  // the sandbox's public partner client: its refresh tokens rotate

/// The replica trials; nil when PostgreSQL is not installed outside CI (under CI that fails).
func soakReplicas(_ settings: ReplicaSoakSettings, python: String) async throws -> [String: Any]? {
    let probe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("ProfirestRefreshProbe").path
    guard FileManager.default.isExecutableFile(atPath: probe) else {
        throw BenchFailure("replica trials: \(probe) is not built (swift build --product ProfirestRefreshProbe)")
    }
    let database: PostgresServer
    do {
        database = try PostgresServer.start(maxConnections: 100 + settings.processes * 40)
    } catch let unavailable as PostgresServer.Unavailable {
        if ProcessInfo.processInfo.environment["CI"] == "true" { throw BenchFailure("replica trials: \(unavailable)") }
        print("replica trials: skipped — \(unavailable)")
        return nil
    }
    defer { database.stop() }
    let sandbox = try Sandbox(python: python)
    defer { sandbox.stop() }
    try await sandbox.admin("POST", "config", ["refresh_grace": settings.grace, "access_token_ttl": settings.tokenSeconds])
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("profirest-replicas-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let table = "replica_tokens"
    let password = ["PGPASSWORD": database.password]
    func probeArguments(_ mode: String) -> [String] {
        [mode, "--postgres", database.connectionStringWithoutPassword, "--table", table]
    }

    // The connections: partner consents minted in batches over one token lifetime, so that their expiries are spread
    // (a refresh never comes early: the first batches' tokens have simply expired when the replicas start).
    let seeding = try InputProcess(probe, arguments: probeArguments("put"), environment: password)
    let batches = max(1, min(8, settings.connections))
    var minted = 0
    for batch in 0..<batches {
        let count = settings.connections * (batch + 1) / batches - minted
        if count > 0 {
            let answer = try await sandbox.admin("POST", "consents/bulk", [
                "count": count, "client_id": replicaClient, "scope": "restaurants:read events:read",
            ])
            for row in answer["data"] as? [[String: Any]] ?? [] {
                let key = "profirest-api:\(replicaClient):replica-\(minted)"
                seeding.send(["key": key, "value": try stateDocument(row)])
                minted += 1
            }
        }
        if batch + 1 < batches {
            try await Task.sleep(nanoseconds: UInt64(Double(settings.tokenSeconds) / Double(batches) * 1e9))
        }
    }
    let seeded = seeding.finish()
    guard minted == settings.connections, seeded["stored"] as? Int == minted else {
        throw BenchFailure("replica trials: \(minted) consents minted, the seeding said \(seeded)")
    }

    // The replicas, killed at random moments and started again at once, each incarnation with a log of its own.
    let start = Date()
    let end = start.addingTimeInterval(settings.seconds)
    var incarnations: [Incarnation] = []
    var running: [Incarnation] = []
    /// A replica ending itself inside the window is started with --die-after-answer, one at a time, until
    /// `windowKills` have: the window's consequence shown on purpose, besides what the random kills happen to hit.
    func launch(_ slot: Int) throws -> Incarnation {
        // Hooked so far: those that ended inside the window (marked or not yet) and the one still running.
        let hookedSoFar = incarnations.filter {
            $0.dieAfter != nil && ($0.diedInWindow || $0.process.process.isRunning || $0.process.process.terminationStatus == 137)
        }.count
        let hooked = hookedSoFar < settings.windowKills && !running.contains { $0.dieAfter != nil && $0.process.process.isRunning }
            && Date() < end.addingTimeInterval(-2 * Double(settings.tokenSeconds) - 2)
        let dieAfter = hooked ? Int.random(in: 1...max(1, min(20, settings.connections / 4))) : nil
        let log = directory.appendingPathComponent("replica-\(slot)-\(incarnations.count).log").path
        var arguments = probeArguments("replica") + [
            "--base", sandbox.api, "--client", replicaClient, "--connections", String(settings.connections),
            "--seconds", String(max(0.5, end.timeIntervalSinceNow)), "--log", log,
            "--interval", String(settings.interval), "--margin", String(settings.margin), "--pool", String(settings.pool),
        ]
        if let dieAfter { arguments += ["--die-after-answer", String(dieAfter)] }
        if settings.withoutLock { arguments.append("--without-lock") }
        let incarnation = Incarnation(slot: slot, log: log, dieAfter: dieAfter, process: try LineProcess(probe, arguments: arguments, environment: password))
        incarnations.append(incarnation)
        return incarnation
    }
    for slot in 0..<settings.processes { running.append(try launch(slot)) }
    /// Replicas that ended by themselves before the end: the one that died inside the window is started again; any
    /// other is a failure (counted below), started again too.
    func replaceEnded() throws {
        guard Date() < end.addingTimeInterval(-0.5) else { return }
        for slot in running.indices where !running[slot].process.process.isRunning {
            let ended = running[slot].process.process
            if running[slot].dieAfter != nil, ended.terminationReason == .exit, ended.terminationStatus == 137 {
                running[slot].diedInWindow = true
            }
            running[slot] = try launch(slot)
        }
    }
    // Random moments over the run, none in its first second or its last two (a replica starting or ending is not
    // the case, and a late kill on a busy machine must still come before the end).
    let moments = (0..<settings.kills).map { _ in Double.random(in: 1...max(1.01, settings.seconds - 2)) }.sorted()
    var kills = 0
    for moment in moments {
        while start.addingTimeInterval(moment).timeIntervalSinceNow > 0 {
            try replaceEnded()
            try await Task.sleep(nanoseconds: UInt64(min(0.05, max(0, start.addingTimeInterval(moment).timeIntervalSinceNow)) * 1e9))
        }
        try replaceEnded()
        guard Date() < end.addingTimeInterval(-0.5) else { break }
        // A random replica — not the one waiting to end itself inside the window, which the count of those needs.
        let victims = running.indices.filter { running[$0].dieAfter == nil }
        let slot = victims.randomElement() ?? Int.random(in: 0..<running.count)
        running[slot].killedAt = Date().timeIntervalSince1970 * 1000
        ProcessControl.kill(running[slot].process.process)
        running[slot].process.process.waitUntilExit()
        running[slot].killed = true
        kills += 1
        running[slot] = try launch(slot)
    }
    while Date() < end.addingTimeInterval(-0.5) {
        try replaceEnded()
        try await Task.sleep(nanoseconds: 50_000_000)
    }
    // The replicas end by themselves at `end`; one that hangs far beyond is killed and counted as a failure.
    let deadline = end.addingTimeInterval(120)
    for incarnation in running {
        while incarnation.process.process.isRunning && Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
        if incarnation.process.process.isRunning {
            ProcessControl.kill(incarnation.process.process)
            incarnation.process.process.waitUntilExit()
            incarnation.hung = true
        }
    }

    let stats = try await sandbox.admin("GET", "stats")
    let refreshes = (stats["token_refreshes"] as? [String: Any])?[replicaClient] as? Int ?? 0
    let early = stats["refresh_early"] as? Int ?? -1
    let reuse = stats["refresh_reuse"] as? Int ?? -1
    let analysis = ReplicaLogs(incarnations)
    let expiries = refreshes - max(0, early)
    var results: [String: Any] = [
        "replica_kill_trials": kills,
        "replica_processes": settings.processes,
        "replica_connections": settings.connections,
        "replica_seconds": settings.seconds,
        "replica_token_ttl_s": settings.tokenSeconds,
        "replica_refreshes": refreshes,
        "replica_expiries": expiries,
        "replica_extra_refreshes": early,
        "replica_refreshes_per_expiry": expiries > 0 ? (Double(refreshes) / Double(expiries) * 1000).rounded() / 1000 : 0,
        "replica_server_invalid_grant": reuse,
        // A spent refresh token used again within the grace, answered with the same tokens (0 on a strict server).
        "replica_server_replays": stats["refresh_replays"] as? Int ?? -1,
        "replica_lost_in_flight": analysis.lost.count,
        "replica_lost_answered_not_stored": analysis.lost.filter { $0 == "answer" }.count,
        "replica_lost_asked_not_answered": analysis.lost.filter { $0 == "ask" }.count,
        // Every invalid_grant the sandbox answered that the logs do not explain: the lines with another history, and
        // those beyond the lines and the killed replicas' asks that may have got one.
        "replica_invalid_grant": analysis.unexplained + max(0, reuse - analysis.invalidGrantLines - analysis.unloggedPossible),
        "replica_invalid_grant_lines": analysis.invalidGrantLines,
        "replica_window_ask_to_answer_ms_p50": windowMs(analysis.askToAnswer, 0.5),
        "replica_window_ask_to_answer_ms_p99": windowMs(analysis.askToAnswer, 0.99),
        "replica_window_answer_to_stored_ms_p50": windowMs(analysis.answerToStored, 0.5),
        "replica_window_answer_to_stored_ms_p99": windowMs(analysis.answerToStored, 0.99),
        "replica_kills_inside_refresh": analysis.killsInsideRefresh,
        "replica_requests_ok": analysis.requestsOK,
        "replica_request_errors": analysis.requestErrors,
        "replica_window_kills": analysis.windowDeaths.count,
        "replica_window_kills_explained": analysis.windowDeathsExplained,
        "replica_process_failures": incarnations.filter { $0.hung || (!$0.cutShort && $0.process.process.terminationStatus != 0) }.count,
        "replica_setup": "\(settings.processes) replica processes x \(settings.connections) connections (every replica a "
            + "client of each), PostgresTokenStorage on a PostgreSQL of the run's own, sandbox with refresh_grace "
            + "\(settings.grace == 0 ? "0 (strict)" : "\(settings.grace) s") and "
            + "access_token_ttl \(settings.tokenSeconds) s, refreshMargin \(settings.margin) s, a request per client "
            + "every \(settings.interval) s on average, \(settings.kills) SIGKILLs at random moments over "
            + "\(Int(settings.seconds)) s",
    ]
    if analysis.unexplained > 0 { results["replica_unexplained_examples"] = analysis.examples }
    if !analysis.errors.isEmpty { results["replica_error_examples"] = Array(Set(analysis.errors)).sorted().prefix(5).map { $0 } }
    let failed = incarnations.filter { !$0.cutShort && !$0.hung && $0.process.process.terminationStatus != 0 }
    if !failed.isEmpty { results["replica_failure_examples"] = Array(Set(failed.compactMap { $0.process.lines().last })).sorted().prefix(5).map { $0 } }
    if ProcessInfo.processInfo.environment["PROFIREST_SOAK_KEEP"] != nil {
        let kept = FileManager.default.temporaryDirectory.appendingPathComponent("profirest-replicas-kept-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.copyItem(at: directory, to: kept)
        print("replica trials: the replicas' logs are in \(kept.path) (PROFIREST_SOAK_KEEP)")
    }
    return results
}

/// The `fraction` percentile of `values` (milliseconds, to 0.1; EventStream.swift's `percentile`), 0 without values.
private func windowMs(_ values: [Double], _ fraction: Double) -> Double {
    values.isEmpty ? 0 : (percentile(values, fraction) * 10).rounded() / 10
}

/// The checks of the replica trials: the keys that missed their target.
func replicaMisses(_ results: [String: Any], _ settings: ReplicaSoakSettings) -> [String] {
    var bad: [String] = []
    if (results["replica_invalid_grant"] as? Int ?? 1) != 0 { bad.append("replica_invalid_grant") }
    if (results["replica_refreshes_per_expiry"] as? Double ?? 0) != 1.0 { bad.append("replica_refreshes_per_expiry") }
    if (results["replica_process_failures"] as? Int ?? 1) != 0 { bad.append("replica_process_failures") }
    if (results["replica_kill_trials"] as? Int ?? 0) < settings.kills { bad.append("replica_kill_trials") }
    // The window on purpose: on a strict server each death inside it must have cost its connection one invalid_grant,
    // explained so; with the grace, none may cost anything.
    let windowKills = results["replica_window_kills"] as? Int ?? 0
    let explained = results["replica_window_kills_explained"] as? Int ?? -1
    if windowKills < settings.windowKills || explained != (settings.grace > 0 ? 0 : windowKills) {
        bad.append("replica_window_kills")
    }
    if settings.grace > 0 && (results["replica_lost_in_flight"] as? Int ?? 1) != 0 { bad.append("replica_lost_in_flight") }
    return bad
}

/// RFC 3339 with milliseconds, as the library writes `expires_at`: whole seconds would make an expiry up to a second
/// early, and with it the first refresh — which the sandbox would count as an extra one.
private var expiryFormatter: ISO8601DateFormatter {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter
}

/// A state document (TokensAndStorage.md, "One document per connection") for a partner consent the sandbox minted.
private func stateDocument(_ row: [String: Any]) throws -> String {
    let expiresIn = row["expires_in"] as? Int ?? 0
    var document: [String: Any] = [
        "version": 1, "token_type": "Bearer",
        "expires_at": expiryFormatter.string(from: Date().addingTimeInterval(TimeInterval(expiresIn))),
        "scopes": ((row["scope"] as? String) ?? "").split(separator: " ").map(String.init),
    ]
    for key in ["access_token", "refresh_token"] { document[key] = row[key] }
    guard document["access_token"] != nil, document["refresh_token"] != nil else { throw BenchFailure("no tokens minted") }
    return String(decoding: try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys]), as: UTF8.self)
}

/// One replica process from its start to its end or its kill.
final class Incarnation: @unchecked Sendable {
    // @unchecked: changed only by the soak's one task, read after the processes ended.
    let slot: Int
    let log: String
    /// --die-after-answer: it was to end itself inside the window after this many answers.
    let dieAfter: Int?
    let process: LineProcess
    /// SIGKILLed by the soak, at this moment (milliseconds since 1970, as the logs' `t`).
    var killed = false
    var killedAt: Double?
    /// Ended itself right after an answer, before storing it (--die-after-answer).
    var diedInWindow = false
    var hung = false

    init(slot: Int, log: String, dieAfter: Int?, process: LineProcess) {
        self.slot = slot
        self.log = log
        self.dieAfter = dieAfter
        self.process = process
    }

    /// Whether it ended without finishing what it had begun: SIGKILLed (at random, or hung at the end), or inside the
    /// window on purpose.
    var cutShort: Bool { killed || diedInWindow || hung }
}

/// A child process that reads JSON lines on its standard input (the probe's `put`); its last output line is its
/// answer.
final class InputProcess {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    init(_ executable: String, arguments: [String], environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func send(_ object: [String: String]) {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        input.fileHandleForWriting.write(data + Data("\n".utf8))
    }

    /// Closes its input and waits for its last line.
    func finish() -> [String: Any] {
        try? input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let last = text.split(separator: "\n").last.map(String.init) ?? "{}"
        return (try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [String: Any] ?? [:]
    }
}

/// What the replicas' logs say, read after every replica ended.
///
/// Each connection's lines of all replicas are read in time order (the replicas refresh a connection one at a time,
/// under its lock, so its lines do not interleave), following what its row in PostgreSQL holds:
/// - `stored`: a refresh token nobody has used yet.
/// - the last `ask` or `answer` of a replica that was killed (or ended itself inside the window), with no `stored`
///   after it: perhaps a spent one — the server may have rotated the token and answered a process that is gone. The
///   row keeps the old token, which a strict server refuses from then on: that refresh is a *window*.
/// - `invalid_grant` is explained when the row holds a token a window may have spent and the refused request went out
///   after the window's replica was gone (killed, or its last line when it ended itself); the connection is then lost
///   (the replica that got it deletes the row), once per window: replica_lost_in_flight. An invalid_grant while the
///   row holds a token nobody has used is a token spent twice by the replicas themselves: unexplained.
/// The sandbox counts every invalid_grant it answered (refresh_reuse); one whose replica was killed before it wrote
/// the line is explained when a killed replica's last line for such a connection is an `ask` made after the window
/// (it asked with the spent token); any other is unexplained.
struct ReplicaLogs {
    /// The windows that cost their connection: the last event of the cut refresh (`ask` or `answer`) of each.
    var lost: [String] = []
    /// invalid_grant lines the row's history does not explain.
    var unexplained = 0
    /// invalid_grant lines in all.
    var invalidGrantLines = 0
    /// Asks of killed replicas, made with a token a window had spent, whose answer (invalid_grant) no line shows.
    var unloggedPossible = 0
    /// The incarnations whose cut refresh cost a connection.
    var lostBy: Set<Int> = []
    /// The incarnations that ended themselves inside the window (--die-after-answer).
    var windowDeaths: [Int] = []
    /// Of those, the ones whose cut refresh was followed by the invalid_grant it must cause on a strict server.
    var windowDeathsExplained: Int { windowDeaths.filter(lostBy.contains).count }
    /// A few unexplained histories, for the report: the connection's last events before the invalid_grant.
    var examples: [String] = []
    /// (kill, connection) pairs whose refresh the kill cut between `ask` and `stored`.
    var killsInsideRefresh = 0
    var requestsOK = 0
    var requestErrors: [String: Int] = [:]
    /// Milliseconds from `ask` to `answer` (the server) and from `answer` to `stored` (the client's write): the window.
    var askToAnswer: [Double] = []
    var answerToStored: [Double] = []
    /// The first errors each replica wrote (`error` lines).
    var errors: [String] = []

    private struct Line {
        let time: Double
        let event: String
        let incarnation: Int
    }

    init(_ incarnations: [Incarnation]) {
        var byConnection: [Int: [Line]] = [:]
        var lastLine: [Int: Double] = [:]  // each incarnation's last line: when one that ended itself was gone
        for (number, incarnation) in incarnations.enumerated() {
            let text = (try? String(contentsOfFile: incarnation.log, encoding: .utf8)) ?? ""
            var open: [Int: (event: String, time: Double)] = [:]  // this replica's refreshes not finished yet
            var totals: [String: Any] = [:]  // its requests' outcomes, as it last wrote them
            for raw in text.split(separator: "\n") {
                guard let object = (try? JSONSerialization.jsonObject(with: Data(raw.utf8))) as? [String: Any],
                    let event = object["e"] as? String, let time = object["t"] as? Double
                else { continue }
                if event == "totals" || event == "end" { totals = object }
                if event == "error", let text = object["error"] as? String { errors.append(text) }
                lastLine[number] = time
                guard let connection = object["c"] as? Int else { continue }
                byConnection[connection, default: []].append(Line(time: time, event: event, incarnation: number))
                switch event {
                case "ask":
                    open[connection] = (event, time)
                case "answer":
                    if let asked = open[connection], asked.event == "ask" { askToAnswer.append(time - asked.time) }
                    open[connection] = (event, time)
                case "stored":
                    if let answered = open[connection], answered.event == "answer" { answerToStored.append(time - answered.time) }
                    open[connection] = nil
                case "invalid_grant", "refused", "no_answer":
                    open[connection] = nil
                default: break
                }
            }
            if incarnation.killed { killsInsideRefresh += open.count }
            if incarnation.diedInWindow { windowDeaths.append(number) }
            requestsOK += totals["ok"] as? Int ?? 0
            for (code, n) in totals["errors"] as? [String: Int] ?? [:] { requestErrors[code, default: 0] += n }
        }
        let refreshEvents: Set<String> = ["ask", "answer", "stored", "invalid_grant", "refused", "no_answer"]
        for (connection, unsorted) in byConnection {
            let lines = unsorted.sorted { $0.time < $1.time }.filter { refreshEvents.contains($0.event) }
            // Each cut-short replica's last line for this connection, when it is an unfinished ask or answer.
            var cut: [Int: Double] = [:]
            for line in lines { cut[line.incarnation] = line.time }
            cut = cut.filter { incarnation, time in
                incarnations[incarnation].cutShort
                    && lines.last { $0.incarnation == incarnation }.map { ["ask", "answer"].contains($0.event) && $0.time == time } == true
            }
            var window: (incarnation: Int, event: String, counted: Bool)?  // the row may hold a token it spent
            for (position, line) in lines.enumerated() {
                if line.event == "stored" { window = nil }
                if line.event == "invalid_grant" {
                    invalidGrantLines += 1
                    // The refused request went out after the cut replica was gone: while it lived it held the
                    // connection's lock, so a request before that would be the lock failing, not the window.
                    let asked = lines[..<position].last { $0.incarnation == line.incarnation && $0.event == "ask" }?.time ?? 0
                    let gone = window.flatMap { incarnations[$0.incarnation].killedAt ?? lastLine[$0.incarnation] } ?? .infinity
                    if let open = window, asked >= gone {
                        if !open.counted {
                            lost.append(open.event)
                            lostBy.insert(open.incarnation)
                            window?.counted = true
                        }
                    } else {
                        unexplained += 1
                        if examples.count < 5 {
                            let shown = lines[..<position].suffix(6).map { "\($0.event)@\($0.incarnation)" }.joined(separator: " ")
                            examples.append("connection \(connection): \(shown) -> invalid_grant@\(line.incarnation)")
                        }
                    }
                }
                if cut[line.incarnation] == line.time {
                    if window == nil {
                        window = (line.incarnation, line.event, false)
                    } else if line.event == "ask" {
                        unloggedPossible += 1  // asked with the spent token, then killed: its invalid_grant unwritten
                    }
                }
            }
        }
    }
}
