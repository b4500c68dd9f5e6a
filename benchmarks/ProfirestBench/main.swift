// make bench: the library's GET + decode and JSON POST + decode against raw URLSession + JSONDecoder, same loopback
// server, one run; then the refresh stampede keys against the sandbox (Stampede.swift).
//
// Variants run interleaved round by round (so drift of the machine hits all of them alike):
//   raw            URLSession (ephemeral, keep-alive) data(for:) + JSONDecoder — what an app would write
//   raw-close      the same with `Connection: close`
//   raw-handler    raw URLSession with dataTask(with:completionHandler:) and its default delegate queue, as the
//                  library's transport did before: what the hop through that OperationQueue costs (BENCHMARKS.md)
//   raw-nocache    raw URLSession data(for:) on a session without a URLCache, as the library's sessions are (so
//                  that no body with a token is kept): what FoundationNetworking does differently without one
//   lib            ProfirestApi with its default transport (on Linux: keep-alive while busy, see ConnectionReuse)
//   lib-keepalive  ProfirestApi over URLSessionTransport(connectionReuse: .keepAlive)
//   lib-close      ProfirestApi over URLSessionTransport(connectionReuse: .closeAfterEachRequest)
//   transport-keepalive  URLSessionTransport.send + JSONDecoder without the pipeline (where the cost sits)
//   post-raw       a ~200-byte JSON POST with an Idempotency-Key (httpBody Data) to /v2/write-quiet, keep-alive,
//                  its {"length": n} answer decoded — what an app would write
//   post-raw-close the same with `Connection: close`: the price of the handshake alone
//   post-lib       ProfirestApi.post of the same body with its default transport (on Linux every request with a
//                  body goes out with `Connection: close` on a session of its own, see ConnectionReuse)
// Reported per request (ms), median over rounds; ratios (library ÷ raw) are medians of per-round ratios, with the
// client's CPU time per request beside them (getrusage of this process around each measurement: what the library
// costs, less disturbed by the other users of a shared machine than wall time). Writes
// benchmarks/results/latest.json, keeping keys other benchmarks put there.
//
// Then the event feed (EventStream.swift), paging (Paging.swift), the refresh stampede (Stampede.swift), the outbox's
// durable writes (OutboxBench.swift) and clean build times (BuildTimes.swift).
// `--only get|post|sse|paging|stampede|outbox|build` runs one part; `--skip a,b` leaves parts out
// (`make bench BENCH_SKIP=build`). See BENCHMARKS.md.
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
    /// `--only <part>`: that part alone (get, post, sse, paging, stampede, outbox, build).
    var only: String?
    /// `--skip a,b`: leave these parts out.
    var skip: Set<String> = []

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
            case "--skip": skip = Set(value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
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

/// The request a variant sends; it names the keys its figures go under (`get_…`, `post_…`).
enum Group: String, CaseIterable {
    case get, post
}

struct Variant {
    let name: String
    let group: Group
    let fetch: Fetch
}

/// The body of the POST variants: a few string fields, ~200 bytes of JSON, as a small write of an app would be.
struct WriteBody: Encodable, Sendable {
    var employeeId = "emp_42"
    var terminalId = "term_kitchen_entrance_01"
    var kind = "clock_in"
    var occurredAt = "2026-11-30T15:31:34.250Z"
    var note = "Příchod zadním vchodem, směna do 22:00"
    var deviceName = "Pichacka iPad 3"
}

/// The answer of /v2/write-quiet.
struct WriteAnswer: Decodable {
    let length: Int
}

/// The library's bytes for `WriteBody` (sorted keys), so the raw side sends the same body.
func writeEncoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return encoder
}

func makeVariants(port: Int) -> [Variant] {
    let base = "http://127.0.0.1:\(port)"
    let url = URL(string: base + "/v2/staff")!
    let writeURL = URL(string: base + "/v2/write-quiet")!
    let decoder = JSONDecoder()
    let encoder = writeEncoder()
    /// Raw URLSession on a session of its own: `request` builds each request (per call, as an app would),
    /// `decode` reads the 200's body.
    func raw(
        close: Bool, cache: Bool = true, request: @escaping @Sendable () throws -> URLRequest,
        decode: @escaping @Sendable (Data) throws -> Int
    ) -> Fetch {
        let configuration = URLSessionConfiguration.ephemeral
        if !cache { configuration.urlCache = nil }
        let session = URLSession(configuration: configuration)
        return {
            var request = try request()
            if close { request.setValue("close", forHTTPHeaderField: "Connection") }
            let (data, response) = try await session.data(for: request)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
            return try decode(data)
        }
    }
    /// The completion-handler path with URLSession's own delegate queue (an OperationQueue): one more hop per request.
    func rawHandlerGet() -> Fetch {
        let session = URLSession(configuration: .ephemeral)
        return {
            var request = URLRequest(url: url)
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            let data: Data = try await withCheckedThrowingContinuation { continuation in
                session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if (response as? HTTPURLResponse)?.statusCode == 200, let data {
                        continuation.resume(returning: data)
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }.resume()
            }
            return try decoder.decode(StaffMemberPage.self, from: data).data.count
        }
    }
    func rawGet(close: Bool, cache: Bool = true) -> Fetch {
        raw(close: close, cache: cache) {
            var request = URLRequest(url: url)
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            return request
        } decode: {
            try decoder.decode(StaffMemberPage.self, from: $0).data.count
        }
    }
    // The headers the library sends with a JSON POST, a fresh Idempotency-Key each time as the library makes one,
    // and the body encoded per request as the library does.
    func rawPost(close: Bool) -> Fetch {
        raw(close: close) {
            var request = URLRequest(url: writeURL)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.setValue("ProfirestAPI-Swift/1.0.0", forHTTPHeaderField: "User-Agent")
            request.setValue(UUID().uuidString.lowercased(), forHTTPHeaderField: "Idempotency-Key")
            request.httpBody = try encoder.encode(WriteBody())
            return request
        } decode: {
            try decoder.decode(WriteAnswer.self, from: $0).length
        }
    }
    func library(_ transport: URLSessionTransport, call: @escaping @Sendable (ProfirestApi) async throws -> Int) -> Fetch {
        let api = ProfirestApi(options: .init(baseURL: base, transport: transport))
        return { try await call(api) }
    }
    func libraryGet(_ transport: URLSessionTransport) -> Fetch {
        library(transport) { try await $0.get("/staff", as: StaffMemberPage.self).data.count }
    }
    // The default transport: on Linux a request with a body has no keep-alive choice.
    func libraryPost() -> Fetch {
        library(URLSessionTransport()) { try await $0.post("/write-quiet", body: WriteBody(), as: WriteAnswer.self).length }
    }
    // The transport alone (no pipeline): tells the transport's share of the library's cost from the pipeline's.
    func transportOnly() -> Fetch {
        let transport = URLSessionTransport(connectionReuse: .keepAlive)
        let request = HTTPRequest(method: "GET", url: url, headers: ["Accept": "application/json"])
        return {
            let response = try await transport.send(request)
            guard response.status == 200 else { throw URLError(.badServerResponse) }
            return try decoder.decode(StaffMemberPage.self, from: response.data).data.count
        }
    }
    return [
        Variant(name: "raw", group: .get, fetch: rawGet(close: false)),
        Variant(name: "transport-keepalive", group: .get, fetch: transportOnly()),
        Variant(name: "lib", group: .get, fetch: libraryGet(URLSessionTransport())),
        Variant(name: "raw-close", group: .get, fetch: rawGet(close: true)),
        Variant(name: "raw-handler", group: .get, fetch: rawHandlerGet()),
        Variant(name: "raw-nocache", group: .get, fetch: rawGet(close: false, cache: false)),
        Variant(name: "lib-keepalive", group: .get, fetch: libraryGet(URLSessionTransport(connectionReuse: .keepAlive))),
        Variant(name: "lib-close", group: .get, fetch: libraryGet(URLSessionTransport(connectionReuse: .closeAfterEachRequest))),
        Variant(name: "post-raw", group: .post, fetch: rawPost(close: false)),
        Variant(name: "post-lib", group: .post, fetch: libraryPost()),
        Variant(name: "post-raw-close", group: .post, fetch: rawPost(close: true)),
    ]
}

/// CPU time of this process (user + system), microseconds.
func cpuMicroseconds() -> Double {
    var usage = rusage()
    #if canImport(Glibc)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
}

/// CPU time (user + system) of another process of this machine, microseconds (Linux /proc; NaN elsewhere).
func cpuMicroseconds(of pid: Int32) -> Double {
    let stat = procFile("/proc/\(pid)/stat")
    // The fields after the command name (which is in parentheses and may hold spaces): utime and stime are the
    // 12th and 13th of them, in clock ticks.
    guard let close = stat.lastIndex(of: ")") else { return .nan }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return .nan }
    return (user + system) * 1e6 / Double(sysconf(Int32(_SC_CLK_TCK)))
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

/// Milliseconds per request of each variant, one value per round.
typealias Times = [String: [Double]]

/// The median of the per-round ratios a ÷ b. Both sides of a ratio ran in the same round, so load that the
/// machine's other users put on it cancels out better than in a ratio of two medians.
func ratio(_ times: Times, _ a: String, _ b: String) -> Double {
    rounded(median(perRound(times, a, b)))
}

func perRound(_ times: Times, _ a: String, _ b: String) -> [Double] {
    zip(times[a]!, times[b]!).map { $0 / $1 }
}

func getFigures(seq: Times, conc: Times) -> [String: Any] {
    [
        "get_sequential_ratio": ratio(seq, "lib", "raw"),
        "get_concurrent_ratio": ratio(conc, "lib", "raw"),
        "get_sequential_ratio_keepalive": ratio(seq, "lib-keepalive", "raw"),
        "get_concurrent_ratio_keepalive": ratio(conc, "lib-keepalive", "raw"),
        "get_sequential_ratio_both_close": ratio(seq, "lib-close", "raw-close"),
        "get_concurrent_ratio_both_close": ratio(conc, "lib-close", "raw-close"),
        "connection_close_cost_sequential": ratio(seq, "lib-close", "lib-keepalive"),
        "connection_close_cost_concurrent": ratio(conc, "lib-close", "lib-keepalive"),
    ]
}

/// The library's write against raw keep-alive (what it costs an app), against raw `Connection: close` (what is
/// left besides the handshake), and raw close ÷ raw keep-alive (the handshake itself). Quartiles of the per-round
/// ratios for the headline figures: a round of 1 024 fresh connections scatters more than one of kept-alive ones.
func postFigures(seq: Times, conc: Times) -> [String: Any] {
    [
        "post_sequential_ratio": ratio(seq, "post-lib", "post-raw"),
        "post_concurrent_ratio": ratio(conc, "post-lib", "post-raw"),
        "post_sequential_ratio_quartiles": quartiles(perRound(seq, "post-lib", "post-raw")).map(rounded),
        "post_concurrent_ratio_quartiles": quartiles(perRound(conc, "post-lib", "post-raw")).map(rounded),
        "post_sequential_ratio_both_close": ratio(seq, "post-lib", "post-raw-close"),
        "post_concurrent_ratio_both_close": ratio(conc, "post-lib", "post-raw-close"),
        "post_raw_close_ratio": ratio(seq, "post-raw-close", "post-raw"),
        "post_raw_close_ratio_concurrent": ratio(conc, "post-raw-close", "post-raw"),
    ]
}

/// What each group's `…_bench_setup` key says about how it was measured.
func setup(_ group: Group, _ settings: Settings) -> String {
    let what = switch group {
    case .get: "~1 KB StaffMemberPage"
    case .post: "POST /v2/write-quiet, \((try? writeEncoder().encode(WriteBody()))?.count ?? 0)-byte JSON body with "
        + "Idempotency-Key, {\"length\": n} answer"
    }
    return "loopback tools/loopback_server.py, \(what), \(settings.rounds) rounds of \(settings.sequential) sequential and "
        + "\(settings.concurrentTasks)x\(settings.concurrentPerTask) concurrent, interleaved; medians"
}

/// The parts of the bench, in the order they run.
let parts = ["get", "post", "sse", "paging", "stampede", "outbox", "build"]

/// The parts `--only` and `--skip` leave to run.
func chosenParts(_ settings: Settings) throws -> [String] {
    for part in settings.skip.union(settings.only.map { [$0] } ?? []) where !parts.contains(part) {
        throw BenchFailure("--only and --skip take \(parts.joined(separator: ", ")), not \(part)")
    }
    return parts.filter { (settings.only == nil || settings.only == $0) && !settings.skip.contains($0) }
}

func run() async throws {
    if CommandLine.arguments.contains("--soak-writer") { return try await runSoakWriter(CommandLine.arguments) }
    if CommandLine.arguments.contains("--soak") { return try await runSoak(CommandLine.arguments) }
    if let child = CommandLine.arguments.firstIndex(of: "--child") {
        let arguments = CommandLine.arguments
        let base = arguments.firstIndex(of: "--base").map { arguments[$0 + 1] } ?? ""
        switch arguments[child + 1] {
        case "sse-run": return try await sseRunChild(base: base, arguments)
        case "paging-memory": return try await pagingMemoryChild(base: base)
        default: throw BenchFailure("unknown --child \(arguments[child + 1])")
        }
    }
    let settings = Settings(CommandLine.arguments)
    let chosen = try chosenParts(settings)
    var machine = machineDescription()
    machine["load_average_at_start"] = loadAverage()
    let started = Date()
    // Each part's keys are merged into the file as soon as it is done.
    func save(_ results: [String: Any]) throws {
        machine["load_average_at_end"] = loadAverage()
        machine["date"] = ISO8601DateFormatter().string(from: Date())
        var results = results
        results["bench_machine"] = machine
        try merge(results, into: settings.output)
    }
    let groups = Group.allCases.filter { chosen.contains($0.rawValue) }
    if !groups.isEmpty { try save(try await compare(groups, settings)) }
    if chosen.contains("sse") { try save(try await eventStreamResults(CommandLine.arguments)) }
    if chosen.contains("paging") { try save(try await pagingResults(CommandLine.arguments)) }
    if chosen.contains("stampede") { try save(try await stampedeResults(CommandLine.arguments)) }
    if chosen.contains("outbox") { try save(try await outboxResults(CommandLine.arguments)) }
    // Last: a clean build takes both cores for minutes.
    if chosen.contains("build") { try save(try buildTimeResults()) }
    FileHandle.standardError.write(Data(String(format: "bench: %@ in %.0f s\n", chosen.joined(separator: ", "),
        Date().timeIntervalSince(started)).utf8))
}

/// The GET and POST comparisons against raw URLSession, interleaved round by round.
func compare(_ groups: [Group], _ settings: Settings) async throws -> [String: Any] {
    let server = try Server(script: settings.serverScript)
    defer { server.stop() }
    let variants = makeVariants(port: server.port).filter { groups.contains($0.group) }
    for variant in variants { _ = try await sequential(variant.fetch, count: 50) }  // warm up connections and caches

    var seq: Times = [:]
    var conc: Times = [:]
    var concCPU: Times = [:]  // µs of CPU per request, concurrent
    var serverCPU: Times = [:]  // µs of the loopback server's CPU per request, concurrent
    let serverPID = server.server.process.processIdentifier
    for round in 0..<settings.rounds {
        // Rotate the order each round so no variant always runs first.
        let order = (0..<variants.count).map { variants[($0 + round) % variants.count] }
        for variant in order {
            seq[variant.name, default: []].append(try await sequential(variant.fetch, count: settings.sequential))
        }
        for variant in order {
            let cpu = cpuMicroseconds()
            let serverStart = cpuMicroseconds(of: serverPID)
            conc[variant.name, default: []].append(
                try await concurrent(variant.fetch, tasks: settings.concurrentTasks, perTask: settings.concurrentPerTask))
            let requests = Double(settings.concurrentTasks * settings.concurrentPerTask)
            concCPU[variant.name, default: []].append((cpuMicroseconds() - cpu) / requests)
            serverCPU[variant.name, default: []].append((cpuMicroseconds(of: serverPID) - serverStart) / requests)
        }
        FileHandle.standardError.write(Data("round \(round + 1)/\(settings.rounds) done\n".utf8))
    }

    let s = seq.mapValues(median)
    let c = conc.mapValues(median)
    let cpu = concCPU.mapValues(median)
    let serverCost = serverCPU.mapValues(median)
    var results: [String: Any] = [:]
    for group in groups {
        let figures = switch group {
        case .get: getFigures(seq: seq, conc: conc)
        case .post: postFigures(seq: seq, conc: conc)
        }
        results.merge(figures) { $1 }
        var perRequest: [String: Any] = [:]
        for variant in variants where variant.group == group {
            perRequest[variant.name] = [
                "sequential": rounded(s[variant.name]!), "concurrent_64": rounded(c[variant.name]!),
                "concurrent_64_cpu_us": rounded(cpu[variant.name]!),
                "concurrent_64_server_cpu_us": rounded(serverCost[variant.name]!),
            ]
        }
        results["\(group.rawValue)_ms_per_request"] = perRequest
        results["\(group.rawValue)_bench_setup"] = setup(group, settings)
    }
    if groups.contains(.get) {
        results["get_concurrent_ratio_quartiles"] = quartiles(perRound(conc, "lib", "raw")).map(rounded)
        results["get_concurrent_ratio_rounds"] = perRound(conc, "lib", "raw").map(rounded)
        results["get_concurrent_cpu_ratio"] = ratio(concCPU, "lib", "raw")
        results["get_concurrent_cpu_ratio_transport"] = ratio(concCPU, "transport-keepalive", "raw")
        // The cause of the gap this library had: the completion handler's hop through the delegate queue.
        results["completion_hop_cost_concurrent"] = ratio(conc, "raw-handler", "raw")
        results["completion_hop_cpu_cost_concurrent"] = ratio(concCPU, "raw-handler", "raw")
        // What is left of it: raw URLSession configured as the library's sessions are (no URLCache) is as slow.
        results["get_sequential_ratio_vs_raw_without_cache"] = ratio(seq, "lib", "raw-nocache")
        results["get_concurrent_ratio_vs_raw_without_cache"] = ratio(conc, "lib", "raw-nocache")
        results["no_cache_cost_sequential"] = ratio(seq, "raw-nocache", "raw")
        results["no_cache_cost_concurrent"] = ratio(conc, "raw-nocache", "raw")
        results["no_cache_cpu_cost_concurrent"] = ratio(concCPU, "raw-nocache", "raw")
    }
    if groups.contains(.post) {
        results["post_concurrent_cpu_ratio"] = ratio(concCPU, "post-lib", "post-raw")
        results["post_concurrent_cpu_ratio_both_close"] = ratio(concCPU, "post-lib", "post-raw-close")
    }

    print("ms per request (median)      sequential   concurrent(64)   CPU µs/request (64): client  server")
    for name in s.keys.sorted() {
        print(name.padding(toLength: 28, withPad: " ", startingAt: 0),
              String(format: "%10.4f   %10.4f   %10.1f  %10.1f", s[name]!, c[name]!, cpu[name]!, serverCost[name]!))
    }
    for key in results.keys.sorted() where key.hasSuffix("ratio") || key.contains("ratio_") || key.contains("cost") {
        print(key, results[key]!)
    }
    return results
}

do {
    try await run()
} catch {
    FileHandle.standardError.write(Data("bench failed: \(error)\n".utf8))
    exit(1)
}
