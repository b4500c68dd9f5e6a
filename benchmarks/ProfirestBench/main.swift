// make bench: the library's GET + decode against raw URLSession + JSONDecoder, same loopback server, one run;
// then the refresh stampede keys against the sandbox (Stampede.swift).
//
// Variants run interleaved round by round (so drift of the machine hits all of them alike):
//   raw            URLSession (ephemeral, keep-alive) data(for:) + JSONDecoder — what an app would write
//   raw-close      the same with `Connection: close`
//   lib            ProfirestApi with its default transport (on Linux: keep-alive while busy, see ConnectionReuse)
//   lib-keepalive  ProfirestApi over URLSessionTransport(connectionReuse: .keepAlive)
//   lib-close      ProfirestApi over URLSessionTransport(connectionReuse: .closeAfterEachRequest)
//   transport-keepalive  URLSessionTransport.send + JSONDecoder without the pipeline (where the cost sits)
// Reported per request (ms), median over rounds; ratios (library ÷ raw) are medians of per-round ratios. Writes benchmarks/results/latest.json,
// keeping keys other benchmarks put there.
import Foundation
import ProfirestAPI
import ProfirestTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct Settings {
    var rounds = 11
    var sequential = 200
    var concurrentTasks = 64
    var concurrentPerTask = 16
    var output = "benchmarks/results/latest.json"
    var serverScript = "tools/loopback_server.py"
    /// `--only stampede`: skip the GET comparison (to look at the stampede alone).
    var only: String?

    init(_ arguments: [String]) {
        var i = 1
        while i + 1 < arguments.count {
            let value = arguments[i + 1]
            switch arguments[i] {
            case "--rounds": rounds = Int(value) ?? rounds
            case "--sequential": sequential = Int(value) ?? sequential
            case "--concurrent-per-task": concurrentPerTask = Int(value) ?? concurrentPerTask
            case "--output": output = value
            case "--server": serverScript = value
            case "--only": only = value
            default: break
            }
            i += 2
        }
    }
}

/// tools/loopback_server.py as a child process (`ChildServer`).
final class Server {
    let server: ChildServer
    let port: Int

    init(script: String) throws {
        server = try ChildServer(executable: "/usr/bin/env", arguments: ["python3", script])
        guard let port = server.announcement["port"] as? Int else {
            server.stop()
            throw BenchFailure("the loopback server did not start: \(server.announcement)")
        }
        self.port = port
    }

    func stop() { server.stop() }
}

typealias Fetch = @Sendable () async throws -> Int

struct Variant {
    let name: String
    let fetch: Fetch
}

func makeVariants(port: Int) -> [Variant] {
    let base = "http://127.0.0.1:\(port)"
    let url = URL(string: base + "/v2/staff")!
    let decoder = JSONDecoder()
    func raw(close: Bool) -> Fetch {
        let session = URLSession(configuration: .ephemeral)
        return {
            var request = URLRequest(url: url)
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            if close { request.setValue("close", forHTTPHeaderField: "Connection") }
            let (data, response) = try await session.data(for: request)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
            return try decoder.decode(StaffMemberPage.self, from: data).data.count
        }
    }
    func library(_ transport: URLSessionTransport) -> Fetch {
        let api = ProfirestApi(options: .init(baseURL: base, transport: transport))
        return { try await api.get("/staff", as: StaffMemberPage.self).data.count }
    }
    // The transport alone (no pipeline): tells the transport's share of the library's cost from the pipeline's.
    func transportOnly() -> Fetch {
        let transport = URLSessionTransport(connectionReuse: .keepAlive)
        let request = HTTPRequest(method: "GET", url: url, headers: ["Accept": "application/json"])
        return {
            let response = try await transport.send(request)
            guard response.status == 200 else { throw URLError(.badServerResponse) }
            return try decoder.decode(StaffMemberPage.self, from: response.body).data.count
        }
    }
    return [
        Variant(name: "raw", fetch: raw(close: false)),
        Variant(name: "transport-keepalive", fetch: transportOnly()),
        Variant(name: "lib", fetch: library(URLSessionTransport())),
        Variant(name: "raw-close", fetch: raw(close: true)),
        Variant(name: "lib-keepalive", fetch: library(URLSessionTransport(connectionReuse: .keepAlive))),
        Variant(name: "lib-close", fetch: library(URLSessionTransport(connectionReuse: .closeAfterEachRequest))),
    ]
}

/// Milliseconds per request of `count` sequential requests.
func sequential(_ fetch: Fetch, count: Int) async throws -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<count { _ = try await fetch() }
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 / Double(count)
}

/// Milliseconds of wall time per request with `tasks` requests in flight at once.
func concurrent(_ fetch: @escaping Fetch, tasks: Int, perTask: Int) async throws -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<tasks {
            group.addTask { for _ in 0..<perTask { _ = try await fetch() } }
        }
        try await group.waitForAll()
    }
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 / Double(tasks * perTask)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func rounded(_ value: Double) -> Double { (value * 10_000).rounded() / 10_000 }

/// Merges `results` into the JSON file at `path`, keeping the keys other benchmarks put there.
func merge(_ results: [String: Any], into path: String) throws {
    var merged: [String: Any] = [:]
    if let data = FileManager.default.contents(atPath: path),
        let existing = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    {
        merged = existing
    }
    for (key, value) in results { merged[key] = value }
    let data = try JSONSerialization.data(withJSONObject: merged, options: [.prettyPrinted, .sortedKeys])
    // Atomic: a reader (or another benchmark merging its keys) never sees half a file.
    try data.write(to: URL(fileURLWithPath: path), options: .atomic)
}

func run() async throws {
    if CommandLine.arguments.contains("--soak-writer") { return try await runSoakWriter(CommandLine.arguments) }
    if CommandLine.arguments.contains("--soak") { return try await runSoak(CommandLine.arguments) }
    let settings = Settings(CommandLine.arguments)
    if settings.only == "stampede" {
        try merge(try await stampedeResults(CommandLine.arguments), into: settings.output)
        return
    }
    let server = try Server(script: settings.serverScript)
    defer { server.stop() }
    let variants = makeVariants(port: server.port)
    for variant in variants { _ = try await sequential(variant.fetch, count: 50) }  // warm up connections and caches

    var seq: [String: [Double]] = [:]
    var conc: [String: [Double]] = [:]
    for round in 0..<settings.rounds {
        // Rotate the order each round so no variant always runs first.
        let order = (0..<variants.count).map { variants[($0 + round) % variants.count] }
        for variant in order {
            seq[variant.name, default: []].append(try await sequential(variant.fetch, count: settings.sequential))
        }
        for variant in order {
            conc[variant.name, default: []].append(
                try await concurrent(variant.fetch, tasks: settings.concurrentTasks, perTask: settings.concurrentPerTask))
        }
        FileHandle.standardError.write(Data("round \(round + 1)/\(settings.rounds) done\n".utf8))
    }

    let s = seq.mapValues(median)
    let c = conc.mapValues(median)
    // Ratios are medians of the per-round ratios: both sides of a ratio ran in the same round, so load that the
    // machine's other users put on it cancels out better than in a ratio of two medians.
    func ratio(_ times: [String: [Double]], _ a: String, _ b: String) -> Double {
        rounded(median(zip(times[a]!, times[b]!).map { $0 / $1 }))
    }
    var results: [String: Any] = [
        "get_sequential_ratio": ratio(seq, "lib", "raw"),
        "get_concurrent_ratio": ratio(conc, "lib", "raw"),
        "get_sequential_ratio_keepalive": ratio(seq, "lib-keepalive", "raw"),
        "get_concurrent_ratio_keepalive": ratio(conc, "lib-keepalive", "raw"),
        "get_sequential_ratio_both_close": ratio(seq, "lib-close", "raw-close"),
        "get_concurrent_ratio_both_close": ratio(conc, "lib-close", "raw-close"),
        "connection_close_cost_sequential": ratio(seq, "lib-close", "lib-keepalive"),
        "connection_close_cost_concurrent": ratio(conc, "lib-close", "lib-keepalive"),
    ]
    var perRequest: [String: Any] = [:]
    for name in s.keys.sorted() {
        perRequest[name] = ["sequential": rounded(s[name]!), "concurrent_64": rounded(c[name]!)]
    }
    results["get_ms_per_request"] = perRequest
    results["get_bench_setup"] = "loopback tools/loopback_server.py, ~1 KB StaffMemberPage, \(settings.rounds) rounds of "
        + "\(settings.sequential) sequential and \(settings.concurrentTasks)x\(settings.concurrentPerTask) concurrent, interleaved; medians"

    // The refresh stampede and the cross-process refresh against the sandbox (Stampede.swift).
    for (key, value) in try await stampedeResults(CommandLine.arguments) { results[key] = value }

    try merge(results, into: settings.output)

    print("ms per request (median)      sequential   concurrent(64)")
    for name in s.keys.sorted() {
        print(name.padding(toLength: 28, withPad: " ", startingAt: 0), String(format: "%10.4f   %10.4f", s[name]!, c[name]!))
    }
    for key in results.keys.sorted() where key.hasSuffix("ratio") || key.contains("ratio_") || key.contains("cost") {
        print(key, results[key]!)
    }
}

do {
    try await run()
} catch {
    FileHandle.standardError.write(Data("bench failed: \(error)\n".utf8))
    exit(1)
}
