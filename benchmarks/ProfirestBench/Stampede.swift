// The refresh stampede against the sandbox (`python -m sandbox serve`, without --validate) over loopback sockets.
//
//   stampede_refreshes                   one ProfirestApi whose access token has expired (its expiry time has passed
//                                        on the client's clock, and the sandbox rejects it too), 1 000 concurrent
//                                        GET /v2/connection: refreshes the sandbox counted (worst round; must be 1)
//   stampede_time_ratio                  wall time of those 1 000 requests on the expired token ÷ the same load on a
//                                        valid token; median of per-round ratios, the runs interleaved (ABBA);
//                                        stampede_time_ratio_quartiles says how far single rounds scatter
//   stampede_revoked_time_ratio          the same when only the server ended the token early (the client cannot know:
//                                        every request goes out, gets 401, and is sent again after the one refresh)
//   cross_process_refreshes_per_expiry   8 ProfirestRefreshProbe processes on one token file after each expiry:
//                                        refreshes counted by the sandbox ÷ expiries (must be 1.0)
//   cross_process_invalid_grant          invalid_grant / not_paired outcomes plus the sandbox's refresh_reuse over
//                                        those rounds (must be 0)
//
// `--only stampede` runs just these keys; `--verbose 1` prints every run with the CPU time of client and sandbox.
// Without the sandbox's interpreter (.venv/bin/python or $PROFIREST_SANDBOX_PYTHON) these keys are skipped.
import Foundation
import ProfirestAPI
import ProfirestTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct StampedeSettings {
    // A single round's ratio scatters by ±20 % on two shared cores (client and sandbox each saturate one, and the
    // VM's neighbours take their share); the median of 41 rounds is stable to about ±3 %.
    var rounds = 41
    var revokedRounds = 10
    var requests = 1_000
    var processRounds = 4
    var processes = 8
    var callsPerProcess = 5
    var probe: String?
    var verbose = false
    var python = Sandbox.defaultPython

    init(_ arguments: [String]) {
        var i = 1
        while i + 1 < arguments.count {
            let value = arguments[i + 1]
            switch arguments[i] {
            case "--stampede-rounds": rounds = max(1, Int(value) ?? rounds)
            case "--revoked-rounds": revokedRounds = max(1, Int(value) ?? revokedRounds)
            case "--stampede-requests": requests = max(1, Int(value) ?? requests)
            case "--process-rounds": processRounds = max(1, Int(value) ?? processRounds)
            case "--probe": probe = value
            case "--python": python = value
            case "--verbose": verbose = value == "1"
            default: break
            }
            i += 2
        }
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The sandbox as a child process (`ChildServer`), without --validate, and its admin API.
final class Sandbox: @unchecked Sendable {
    let server: ChildServer
    let api: String
    private let session = URLSession(configuration: .ephemeral)

    /// The sandbox's interpreter: $PROFIREST_SANDBOX_PYTHON, else the venv `make venv` creates.
    static var defaultPython: String {
        ProcessInfo.processInfo.environment["PROFIREST_SANDBOX_PYTHON"].flatMap { $0.isEmpty ? nil : $0 } ?? ".venv/bin/python"
    }

    init(python: String) throws {
        server = try ChildServer(executable: python, arguments: sandboxArguments(validate: false))
        guard let api = server.announcement["api"] as? String else {
            server.stop()
            throw BenchFailure("the sandbox did not start: \(server.announcement)")
        }
        self.api = api
    }

    var pid: Int32 { server.process.processIdentifier }

    func stop() { server.stop() }

    /// `/_sandbox/<path>` with a JSON body; the JSON answer.
    @discardableResult
    func admin(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> [String: Any] {
        var request = URLRequest(url: URL(string: api + "/_sandbox/" + path)!)
        request.httpMethod = method
        if let body {
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw BenchFailure("\(method) /_sandbox/\(path) answered \(status): \(String(decoding: data, as: UTF8.self))")
        }
        return data.isEmpty ? [:] : ((try JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    func refreshes(_ clientID: String) async throws -> Int {
        ((try await admin("GET", "stats"))["token_refreshes"] as? [String: Any])?[clientID] as? Int ?? 0
    }

    func refreshReuse() async throws -> Int { (try await admin("GET", "stats"))["refresh_reuse"] as? Int ?? 0 }

    /// A paired device's tokens at once (`POST /_sandbox/tokens`), written into `storage` as the state document
    /// (TokensAndStorage.md, "One document per connection") under the client's default key — as if a pairing had just finished.
    func pairDevice(clientID: String, storage: any TokenStorage) async throws {
        let tokens = try await admin("POST", "tokens", ["client_id": clientID, "restaurant_id": "11"])
        let expiresIn = tokens["expires_in"] as? Int ?? 1800
        let formatter = ISO8601DateFormatter()
        var document: [String: Any] = [
            "version": 1,
            "expires_at": formatter.string(from: Date().addingTimeInterval(TimeInterval(expiresIn))),
            "token_type": "Bearer",
            "scopes": ((tokens["scope"] as? String) ?? "").split(separator: " ").map(String.init),
        ]
        for key in ["access_token", "refresh_token", "restaurant_id", "device_id"] { document[key] = tokens[key] }
        guard document["access_token"] != nil, document["refresh_token"] != nil else { throw BenchFailure("no tokens minted") }
        let text = String(decoding: try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys]), as: UTF8.self)
        try storage.set("profirest-api:\(clientID)", text)
    }
}

/// `count` concurrent GET /v2/connection; milliseconds of wall time and the outcomes that were not "ok".
func connectionLoad(_ api: ProfirestApi, count: Int) async -> (ms: Double, firstMs: Double, failures: [String: Int]) {
    let start = DispatchTime.now().uptimeNanoseconds
    let (outcomes, first) = await withTaskGroup(of: (String, UInt64).self) { group in
        for _ in 0..<count {
            group.addTask {
                let outcome: String
                do {
                    _ = try await api.get("/connection")
                    outcome = "ok"
                } catch let e as ProfirestAPIError {
                    outcome = e.code
                } catch {
                    outcome = String(describing: type(of: error))
                }
                return (outcome, DispatchTime.now().uptimeNanoseconds)
            }
        }
        var counts: [String: Int] = [:]
        var first = UInt64.max
        for await (outcome, end) in group {
            counts[outcome, default: 0] += 1
            first = min(first, end)
        }
        return (counts, first)
    }
    let ms = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    return (ms, Double(first - start) / 1e6, outcomes.filter { $0.key != "ok" })
}

/// One probe process; `finish` waits (bounded by `deadline`, then SIGKILL) and parses its last line.
struct ProbeProcess {
    let process: Process
    let output: Pipe

    init(executable: String, arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func finish(deadline: Date) -> [String: Any] {
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning {
            ProcessControl.kill(process)
            process.waitUntilExit()
            return ["killed": true]
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let last = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? "{}"
        return (try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [String: Any] ?? [:]
    }
}

func stampedeResults(_ arguments: [String]) async throws -> [String: Any] {
    let settings = StampedeSettings(arguments)
    let verbose = settings.verbose
    guard FileManager.default.isExecutableFile(atPath: settings.python),
        FileManager.default.fileExists(atPath: "sandbox/__main__.py")
    else {
        print("stampede: skipped — the sandbox is not available (\(settings.python) or sandbox/ missing; run `make venv`)")
        return [:]
    }
    let sandbox = try Sandbox(python: settings.python)
    defer { sandbox.stop() }
    var results: [String: Any] = [:]

    // In-process stampede: one client, valid vs expired token, interleaved (the order alternates each round).
    let client = "profirest-dochazka"
    let storage = MemoryTokenStorage()
    try await sandbox.pairDevice(clientID: client, storage: storage)
    // The client's clock: an expired round moves it past the token's expiry, as real time would.
    let clock = ClockOffset()
    let api = ProfirestApi(options: .init(
        baseURL: sandbox.api, clientID: client, language: "en", storage: storage, timeout: 60, clock: { clock.now() }))
    _ = await connectionLoad(api, count: 100)  // warm up connections and caches
    // Every run gets the same admin calls around it (a valid run expires the tokens of a client that has none) and
    // a pause before it, so the only difference between the kinds is the token. Valid and expired alternate in
    // ABBA order; the revoked runs come afterwards in their own rounds, so their extra load (2 000 requests, 1 000
    // error answers) never lands on the runs the ratio compares.
    var times: [String: [Double]] = [:]
    var refreshCounts: [Int] = []
    var sentOnExpired: [Int] = []  // GET /v2/connection the sandbox saw in an expired run
    var failed = 0
    func measure(_ kind: String) async throws {
        try await sandbox.admin("DELETE", "stats")
        try await sandbox.admin("POST", "tokens/expire", kind == "valid" ? ["client_id": "bench-nobody"] : [:])
        // Past the expiry for an expired run; past the refresh storm guard's window (60 s) for a revoked one, whose
        // token the client still holds for valid — as if the runs were a minute apart.
        if kind == "expired" { clock.advance(by: 3_600) }
        if kind == "revoked" { clock.advance(by: 61) }
        try await Task.sleep(nanoseconds: 150_000_000)
        let cpuBefore = processCPU(sandbox.pid)
        let selfBefore = processCPU(ProcessInfo.processInfo.processIdentifier)
        let run = await connectionLoad(api, count: settings.requests)
        let serverCPU = processCPU(sandbox.pid) - cpuBefore
        let clientCPU = processCPU(ProcessInfo.processInfo.processIdentifier) - selfBefore
        let stats = try await sandbox.admin("GET", "stats")
        times[kind, default: []].append(run.ms)
        failed += run.failures.values.reduce(0, +)
        if !run.failures.isEmpty { FileHandle.standardError.write(Data("stampede failures: \(run.failures)\n".utf8)) }
        if kind == "expired" {
            refreshCounts.append((stats["token_refreshes"] as? [String: Any])?[client] as? Int ?? 0)
            sentOnExpired.append((stats["requests"] as? [String: Any])?["GET /v2/connection"] as? Int ?? 0)
        }
        if verbose {
            FileHandle.standardError.write(Data(String(
                format: "  %@ %.1f ms (first answer after %.1f ms) server cpu %.0f ms client cpu %.0f ms\n", kind, run.ms, run.firstMs, serverCPU, clientCPU).utf8))
        }
    }
    for round in 0..<settings.rounds {
        for kind in round % 2 == 0 ? ["valid", "expired"] : ["expired", "valid"] { try await measure(kind) }
    }
    let expiredRatios = zip(times["expired"]!, times["valid"]!).map { $0 / $1 }
    let validMedian = median(times["valid"]!)
    times["valid"] = []
    for round in 0..<settings.revokedRounds {
        for kind in round % 2 == 0 ? ["valid", "revoked"] : ["revoked", "valid"] { try await measure(kind) }
    }
    let revokedRatios = zip(times["revoked"]!, times["valid"]!).map { $0 / $1 }
    if verbose {
        FileHandle.standardError.write(Data("expired ÷ valid per round: \(expiredRatios.map(rounded))\n".utf8))
    }
    results["stampede_time_ratio"] = rounded(median(expiredRatios))
    results["stampede_time_ratio_quartiles"] = quartiles(expiredRatios).map(rounded)
    results["stampede_revoked_time_ratio"] = rounded(median(revokedRatios))
    results["stampede_refreshes"] = refreshCounts.max() ?? 0
    results["stampede_failed_requests"] = failed
    results["stampede_requests_seen_by_server"] = sentOnExpired.max() ?? 0
    results["stampede_ms"] = [
        "valid": rounded(validMedian), "expired": rounded(median(times["expired"]!)),
        "revoked": rounded(median(times["revoked"]!)),
    ]

    // Cross-process: 8 probe processes on one token file after each expiry.
    let probe = settings.probe
        ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ProfirestRefreshProbe").path
    if FileManager.default.isExecutableFile(atPath: probe) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("profirest-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("tokens.json").path
        let processClient = "profirest-pos"
        try await sandbox.pairDevice(clientID: processClient, storage: FileTokenStorage(path: file))
        try await sandbox.admin("DELETE", "stats")
        var badGrant = 0
        var processFailures = 0
        for round in 0..<settings.processRounds {
            try await sandbox.admin("POST", "tokens/expire", [:])
            let probes = try (0..<settings.processes).map { _ in
                try ProbeProcess(executable: probe, arguments: [
                    "calls", "--base", sandbox.api, "--file", file, "--client", processClient,
                    "--calls", String(settings.callsPerProcess),
                ])
            }
            let deadline = Date().addingTimeInterval(60)
            for summary in probes.map({ $0.finish(deadline: deadline) }) {
                let errors = summary["errors"] as? [String: Int] ?? [:]
                badGrant += (errors["invalid_grant"] ?? 0) + (errors["not_paired"] ?? 0)
                let ok = summary["ok"] as? Int ?? 0
                processFailures += settings.callsPerProcess - ok
                if ok != settings.callsPerProcess {
                    FileHandle.standardError.write(Data("probe: \(summary)\n".utf8))
                }
            }
            FileHandle.standardError.write(Data("cross-process round \(round + 1)/\(settings.processRounds) done\n".utf8))
        }
        let refreshes = try await sandbox.refreshes(processClient)
        let reuse = try await sandbox.refreshReuse()
        results["cross_process_refreshes_per_expiry"] = rounded(Double(refreshes) / Double(settings.processRounds))
        results["cross_process_invalid_grant"] = badGrant + reuse
        results["cross_process_failed_calls"] = processFailures
    } else {
        print("cross-process: skipped — \(probe) is not built (swift build --product ProfirestRefreshProbe)")
    }
    results["stampede_bench_setup"] = "sandbox without --validate on loopback, GET /v2/connection; \(settings.rounds) rounds of "
        + "\(settings.requests) concurrent requests on a valid and an expired (clock past expiry) token in ABBA order, "
        + "then \(settings.revokedRounds) rounds of valid and server-revoked; same admin calls and a 150 ms pause before each run; "
        + "median of per-round ratios; "
        + "\(settings.processRounds) rounds of \(settings.processes) ProfirestRefreshProbe processes x \(settings.callsPerProcess) calls on one token file"

    for key in results.keys.sorted() where key != "stampede_bench_setup" { print(key, results[key]!) }
    return results
}

/// A clock that runs with real time plus an offset the bench moves forward, so a token's expiry passes at once.
final class ClockOffset: @unchecked Sendable {
    // @unchecked: `seconds` is only touched under `lock`.
    private let lock = NSLock()
    private var seconds: TimeInterval = 0

    func now() -> Date {
        lock.lock()
        defer { lock.unlock() }
        return Date().addingTimeInterval(seconds)
    }

    func advance(by interval: TimeInterval) {
        lock.lock()
        seconds += interval
        lock.unlock()
    }
}

/// CPU time (user + system) of a process in milliseconds, from /proc (0 where there is none).
func processCPU(_ pid: Int32) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return 0 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) * 10  // clock ticks of 10 ms
}

/// The first and third quartile: how far the per-round ratios scatter around their median.
func quartiles(_ values: [Double]) -> [Double] {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return [] }
    return [sorted[(sorted.count - 1) / 4], sorted[(3 * (sorted.count - 1)) / 4]]
}
