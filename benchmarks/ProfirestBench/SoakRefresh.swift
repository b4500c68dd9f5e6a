// The refresh part of make soak: processes sharing one token file while their refreshes meet dropped connections
// and the processes themselves are SIGKILLed at random moments — during refreshes, and now and then inside the
// token file's replacement.
//
//   refresh_kill_trials      processes killed (each replaced at once by a new one on the same file)
//   token_file_corruptions   reads of the token file, after every kill and at the end, that are not a state
//                            document with both tokens
//   refresh_invalid_grant    requests that ended in not_paired / invalid_grant, and processes that found themselves
//                            unpaired (a refresh token spent twice)
//   refresh_stall_max_s      the longest any request waited, dropped connections and all (seconds)
import Foundation
import ProfirestAPI
import ProfirestTestSupport

struct RefreshSoakSettings {
    var processes = 8
    var seconds = 30.0
    var kills = 100
}

func soakRefresh(_ sandbox: Sandbox, _ settings: RefreshSoakSettings, directory: URL) async throws -> [String: Any] {
    let client = "profirest-dochazka"
    let file = directory.appendingPathComponent("refresh-tokens.json").path
    try await sandbox.pairDevice(clientID: client, storage: FileTokenStorage(path: file))
    try await sandbox.admin("DELETE", "faults")
    try await sandbox.admin("POST", "faults", [
        "action": "random", "rate": 0.3, "path": "/oauth/token", "count": NSNull(), "seed": 7,
        "mix": ["drop_before", "drop_after", "status:503"],
    ])
    let probe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("ProfirestRefreshProbe").path
    let end = Date().addingTimeInterval(settings.seconds)
    func start() throws -> LineProcess {
        try LineProcess(probe, arguments: [
            "loop", "--base", sandbox.api, "--file", file, "--client", client,
            "--seconds", String(max(1, end.timeIntervalSinceNow)),
        ])
    }
    var running = try (0..<settings.processes).map { _ in try start() }
    var finished: [LineProcess] = []
    var corruptions = 0
    var kills = 0
    while Date() < end {
        // Spread the kills left over the time left (each kill and restart takes time of its own).
        let pause = max(0.01, (end.timeIntervalSinceNow - 1.5) / Double(settings.kills - kills + 1))
        try await Task.sleep(nanoseconds: UInt64(pause * 1e9))
        // Tokens that expire all the time: every process keeps refreshing, so kills land in refreshes.
        _ = try? await sandbox.admin("POST", "tokens/expire", ["client_id": client])
        guard kills < settings.kills, Date() < end.addingTimeInterval(-1) else { continue }
        let victim = Int.random(in: 0..<running.count)
        ProcessControl.kill(running[victim].process)
        running[victim].process.waitUntilExit()
        kills += 1
        if !tokenFileIsWhole(file) { corruptions += 1 }
        finished.append(running[victim])
        running[victim] = try start()
    }
    for probe in running { probe.process.waitUntilExit() }
    finished += running
    if !tokenFileIsWhole(file) { corruptions += 1 }
    try await sandbox.admin("DELETE", "faults")

    let summaries = finished.compactMap(lastSummary)
    var invalidGrant = 0
    var stallMs = 0
    var requests = 0
    for summary in summaries {
        let errors = summary["errors"] as? [String: Int] ?? [:]
        invalidGrant += (errors["not_paired"] ?? 0) + (errors["invalid_grant"] ?? 0)
        if summary["paired"] as? Bool == false { invalidGrant += 1 }
        stallMs = max(stallMs, summary["max_ms"] as? Int ?? 0)
        requests += (summary["ok"] as? Int ?? 0) + errors.values.reduce(0, +)
    }
    return [
        "refresh_kill_trials": kills, "token_file_corruptions": corruptions, "refresh_invalid_grant": invalidGrant,
        "refresh_stall_max_s": Double(stallMs) / 1000, "refresh_processes": settings.processes,
        "refresh_requests_counted": requests,
        "refresh_token_refreshes": try await sandbox.refreshes(client),
    ]
}

/// Whether the token file is a state document holding both tokens (the library's own JSON; never printed).
func tokenFileIsWhole(_ path: String) -> Bool {
    guard let data = FileManager.default.contents(atPath: path),
        let outer = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    else { return false }
    // FileTokenStorage keeps the state document as a string under the storage key.
    for case let text as String in outer.values {
        guard let document = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else { return false }
        return document["access_token"] is String && document["refresh_token"] is String
    }
    return false
}

/// The last complete summary line a `ProfirestRefreshProbe loop` printed, even when it was SIGKILLed mid-line.
func lastSummary(_ probe: LineProcess) -> [String: Any]? {
    for line in probe.lines().reversed() {
        if let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] { return object }
    }
    return nil
}
