// make bench: the library's GET + decode and JSON POST + decode against raw URLSession + JSONDecoder and against
// libcurl driven directly (DirectCurl.swift), same loopback server, one run; then the event feed, idle streams,
// paging, the refresh stampede, the real network at +50 ms and clean build times (their files).
//
// Variants run interleaved round by round (so drift of the machine hits all of them alike):
//   raw            URLSession (ephemeral, keep-alive) data(for:) + JSONDecoder — what an app would write
//   raw-close      the same with `Connection: close`
//   raw-handler    raw URLSession with dataTask(with:completionHandler:) and its default delegate queue, as the
//                  library's URLSessionTransport did before: what the hop through that OperationQueue costs
//   raw-nocache    raw URLSession data(for:) on a session without a URLCache, as URLSessionTransport's sessions are
//   lib            ProfirestApi with its default transport (made without `transport:`; on Linux the process's shared
//                  CurlTransport: connections kept for reads and writes)
//   transport-curl CurlTransport.send + JSONDecoder without the pipeline (the default transport's share of the cost)
//   curl           libcurl driven directly by the bench through CProfirestCurl (DirectCurl.swift): the floor
//   curl-new-handle  the same with a new easy handle per request (CurlTransport reuses its handles, reset)
//   lib-urlsession ProfirestApi over URLSessionTransport() (the transport used where libcurl is missing; on Linux
//                  keep-alive while busy, writes with `Connection: close`)
//   lib-keepalive  ProfirestApi over URLSessionTransport(policy: .keepAlive)
//   lib-close      ProfirestApi over URLSessionTransport(policy: .closeAfterEachRequest)
//   transport-keepalive  URLSessionTransport.send + JSONDecoder without the pipeline
//   post-raw       a ~200-byte JSON POST with an Idempotency-Key (httpBody Data) to /v2/write-quiet, keep-alive,
//                  its {"length": n} answer decoded — what an app would write
//   post-raw-close the same with `Connection: close`: the price of the handshake alone
//   post-lib       ProfirestApi.post of the same body with its default transport (CurlTransport, kept-alive)
//   post-lib-urlsession  the same over URLSessionTransport() (on Linux: `Connection: close` on a session of its own)
//   post-curl      the same POST through libcurl driven directly (a fresh Idempotency-Key and body each time)
// Reported per request (ms), median over rounds; ratios (library ÷ raw, library ÷ curl) are medians of per-round
// ratios, with the client's CPU time per request beside them (ProcessControl.cpuMicroseconds around each measurement:
// what the library costs, less disturbed by the other users of a shared machine than wall time). Writes
// benchmarks/results/latest.json, keeping keys other benchmarks put there.
//
// Parts, in the order they run: get, post, curl (the three share the interleaved rounds above: a variant runs when a
// part it serves is chosen), sse (EventStream.swift), idle (IdleStreams.swift), paging (Paging.swift), stampede
// (Stampede.swift), outbox (OutboxBench.swift: the outbox's durable writes), net50 (RealNetwork.swift), compress
// (Compression.swift: a 200 KB list at +50 ms, gzip vs plain), partner
// (PartnerBench.swift: a thousand restaurants in one process), build (BuildTimes.swift). `--only <part>` runs one part; `--skip a,b` leaves parts out (`make bench BENCH_SKIP=build`).
// `--variants a,b` runs only those variants of get/post/curl (e.g. `--only curl --variants transport-curl` under
// `perf record` to see one variant's cost alone); keys needing a variant left out are not written.
// See BENCHMARKS.md.
import Foundation
@_spi(TransportTuning) import ProfirestAPI
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
    /// `--only <part>`: that part alone (get, post, sse, paging, stampede, outbox, partner, build).
    var only: String?
    /// `--skip a,b`: leave these parts out.
    var skip: Set<String> = []
    /// `--variants a,b`: only these variants of the get/post/curl comparison (nil: every one the parts need).
    var variants: Set<String>?

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
            case "--variants": variants = Set(value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
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
    /// The parts of the bench that need this variant: it runs when any of them is chosen.
    let parts: Set<String>
    /// Milliseconds per request of `count` requests one after the other.
    let sequential: @Sendable (_ count: Int) async throws -> Double
    /// Milliseconds of wall time per request with `tasks` in flight, `perTask` each.
    let concurrent: @Sendable (_ tasks: Int, _ perTask: Int) async throws -> Double

    /// A variant whose every request is one async call.
    init(name: String, group: Group, parts: Set<String>, fetch: @escaping Fetch) {
        self.name = name
        self.group = group
        self.parts = parts
        sequential = { try await timeSequential(fetch, count: $0) }
        concurrent = { try await timeConcurrent(fetch, tasks: $0, perTask: $1) }
    }

    #if os(Linux)
    /// libcurl driven directly: whole batches on a thread of their own.
    init(name: String, group: Group, parts: Set<String>, curl: DirectCurl) {
        self.name = name
        self.group = group
        self.parts = parts
        sequential = { try await curl.sequential(count: $0) }
        concurrent = { try await curl.concurrent(tasks: $0, perTask: $1) }
    }
    #endif
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

/// The variants that serve one of `parts`, only those named in `chosen` when given.
func makeVariants(port: Int, parts: Set<String>, chosen: Set<String>? = nil) throws -> [Variant] {
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
    /// A client with `transport`, or with the default transport when nil (made without `transport:`, as an app does).
    func library(_ transport: (any HTTPTransport)?, call: @escaping @Sendable (ProfirestApi) async throws -> Int) -> Fetch {
        let api = ProfirestApi(options: .init(baseURL: base, transport: transport))
        return { try await call(api) }
    }
    func libraryGet(_ transport: (any HTTPTransport)?) -> Fetch {
        library(transport) { try await $0.get("/staff", as: StaffMemberPage.self).data.count }
    }
    func libraryPost(_ transport: (any HTTPTransport)?) -> Fetch {
        library(transport) { try await $0.post("/write-quiet", body: WriteBody(), as: WriteAnswer.self).length }
    }
    // A transport alone (no pipeline): tells the transport's share of the library's cost from the pipeline's.
    func transportOnly(_ transport: any HTTPTransport) -> Fetch {
        let request = HTTPRequest(method: "GET", url: url, headers: ["Accept": "application/json"])
        return {
            let response = try await transport.send(request)
            guard response.status == 200 else { throw URLError(.badServerResponse) }
            return try decoder.decode(StaffMemberPage.self, from: response.data).data.count
        }
    }
    var variants = [
        Variant(name: "raw", group: .get, parts: ["get", "curl"], fetch: rawGet(close: false)),
        Variant(name: "transport-keepalive", group: .get, parts: ["get"],
                fetch: transportOnly(URLSessionTransport(policy: .keepAlive))),
        Variant(name: "lib", group: .get, parts: ["get", "curl"], fetch: libraryGet(nil)),
        Variant(name: "raw-close", group: .get, parts: ["get"], fetch: rawGet(close: true)),
        Variant(name: "lib-urlsession", group: .get, parts: ["get"], fetch: libraryGet(URLSessionTransport())),
        Variant(name: "raw-handler", group: .get, parts: ["get"], fetch: rawHandlerGet()),
        Variant(name: "raw-nocache", group: .get, parts: ["get"], fetch: rawGet(close: false, cache: false)),
        Variant(name: "lib-keepalive", group: .get, parts: ["get"],
                fetch: libraryGet(URLSessionTransport(policy: .keepAlive))),
        Variant(name: "lib-close", group: .get, parts: ["get"],
                fetch: libraryGet(URLSessionTransport(policy: .closeAfterEachRequest))),
        Variant(name: "post-raw", group: .post, parts: ["post", "curl"], fetch: rawPost(close: false)),
        Variant(name: "post-lib", group: .post, parts: ["post", "curl"], fetch: libraryPost(nil)),
        Variant(name: "post-raw-close", group: .post, parts: ["post"], fetch: rawPost(close: true)),
        Variant(name: "post-lib-urlsession", group: .post, parts: ["post"], fetch: libraryPost(URLSessionTransport())),
    ]
    #if os(Linux)
    variants += [
        Variant(name: "transport-curl", group: .get, parts: ["get", "curl"], fetch: transportOnly(try CurlTransport())),
        Variant(name: "curl", group: .get, parts: ["curl"], curl: try DirectCurl(DirectCurlRequest(
            url: url.absoluteString, headers: ["Accept: application/json"],
            decode: { try decoder.decode(StaffMemberPage.self, from: $0).data.count }))),
        Variant(name: "curl-new-handle", group: .get, parts: ["curl"], curl: try DirectCurl(DirectCurlRequest(
            url: url.absoluteString, headers: ["Accept: application/json"],
            decode: { try decoder.decode(StaffMemberPage.self, from: $0).data.count }), newHandlePerRequest: true)),
        Variant(name: "hop", group: .get, parts: ["curl"], fetch: { [hop = try ThreadHop()] in await hop.hop() }),
        Variant(name: "post-curl", group: .post, parts: ["curl"], curl: try DirectCurl(DirectCurlRequest(
            url: writeURL.absoluteString,
            headers: ["Accept: application/json", "Content-Type: application/json", "User-Agent: ProfirestAPI-Swift/1.0.0",
                      "Expect:"],
            freshHeaders: { ["Idempotency-Key: " + UUID().uuidString.lowercased()] },
            body: { try encoder.encode(WriteBody()) },
            decode: { try decoder.decode(WriteAnswer.self, from: $0).length }))),
    ]
    #endif
    return variants.filter { variant in
        !variant.parts.isDisjoint(with: parts) && (chosen?.contains(variant.name) ?? true)
    }
}

/// CPU time of this process (user + system), microseconds.
func cpuMicroseconds() -> Double {
    ProcessControl.cpuMicroseconds()
}

/// CPU time (user + system) of another process of this machine, microseconds (Linux /proc; NaN elsewhere).
func cpuMicroseconds(of pid: Int32) -> Double {
    let stat = procFile("/proc/\(pid)/stat")
    // The fields after the command name (which is in parentheses and may hold spaces): utime and stime are the
    // 12th and 13th of them, in clock ticks.
    guard let close = stat.lastIndex(of: ")") else { return .nan }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return .nan }
    return (user + system) * 1e6 / (ProcessControl.clockTicksPerSecond ?? .nan)
}

/// Milliseconds per request of `count` sequential requests.
func timeSequential(_ fetch: Fetch, count: Int) async throws -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<count { _ = try await fetch() }
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 / Double(count)
}

/// Milliseconds of wall time per request with `tasks` requests in flight at once.
func timeConcurrent(_ fetch: @escaping Fetch, tasks: Int, perTask: Int) async throws -> Double {
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

/// The keys of the comparison: each (key, times, a, b) whose two variants ran becomes `key: ratio(times, a, b)`.
/// Which parts ran decides which variants did, so a part's keys appear exactly when it ran.
struct Figures {
    let seq: Times
    let conc: Times
    let concCPU: Times
    var results: [String: Any] = [:]

    func ran(_ names: String...) -> Bool { names.allSatisfy { seq[$0] != nil } }

    mutating func key(_ key: String, _ times: Times, _ a: String, _ b: String) {
        guard ran(a, b) else { return }
        results[key] = ratio(times, a, b)
    }

    /// `<group>_sequential_ratio_floor_vs_curl` and `<group>_concurrent_cpu_ratio_floor_vs_curl`: (curl + hop) ÷ curl,
    /// round by round.
    mutating func floor(_ group: String, _ curl: String, _ hop: String) {
        guard ran(curl, hop) else { return }
        for (key, times) in [("\(group)_sequential_ratio_floor_vs_curl", seq),
                             ("\(group)_concurrent_cpu_ratio_floor_vs_curl", concCPU)] {
            results[key] = rounded(median(zip(times[curl]!, times[hop]!).map { ($0 + $1) / $0 }))
        }
    }

    /// `<group>_sequential<suffix>` and `<group>_concurrent<suffix>` for a ÷ b.
    mutating func both(_ group: String, _ suffix: String, _ a: String, _ b: String) {
        key("\(group)_sequential\(suffix)", seq, a, b)
        key("\(group)_concurrent\(suffix)", conc, a, b)
    }
}

/// Every key of the GET, POST and direct-curl comparison (BENCHMARKS.md says what each means).
func comparisonFigures(seq: Times, conc: Times, concCPU: Times) -> [String: Any] {
    var f = Figures(seq: seq, conc: conc, concCPU: concCPU)
    // The library with its default transport against raw URLSession keep-alive: the headline figures.
    f.both("get", "_ratio", "lib", "raw")
    f.key("get_concurrent_cpu_ratio", concCPU, "lib", "raw")
    if f.ran("lib", "raw") {
        f.results["get_concurrent_ratio_quartiles"] = quartiles(perRound(conc, "lib", "raw")).map(rounded)
        f.results["get_concurrent_ratio_rounds"] = perRound(conc, "lib", "raw").map(rounded)
    }
    f.both("post", "_ratio", "post-lib", "post-raw")
    f.key("post_concurrent_cpu_ratio", concCPU, "post-lib", "post-raw")
    if f.ran("post-lib", "post-raw") {
        f.results["post_sequential_ratio_quartiles"] = quartiles(perRound(seq, "post-lib", "post-raw")).map(rounded)
        f.results["post_concurrent_ratio_quartiles"] = quartiles(perRound(conc, "post-lib", "post-raw")).map(rounded)
    }
    // The library against libcurl driven directly (the floor), and where the difference sits: the transport alone
    // against curl, and curl against raw URLSession.
    f.both("get", "_ratio_vs_curl", "lib", "curl")
    f.both("post", "_ratio_vs_curl", "post-lib", "post-curl")
    // Their spread: on a shared machine single rounds of a sub-millisecond loop scatter widely.
    for (key, times, a, b) in [("get_sequential", seq, "lib", "curl"), ("get_concurrent", conc, "lib", "curl"),
                               ("post_sequential", seq, "post-lib", "post-curl")] where f.ran(a, b) {
        f.results["\(key)_ratio_vs_curl_quartiles"] = quartiles(perRound(times, a, b)).map(rounded)
    }
    f.key("get_concurrent_cpu_ratio_vs_curl", concCPU, "lib", "curl")
    f.key("post_concurrent_cpu_ratio_vs_curl", concCPU, "post-lib", "post-curl")
    f.both("get", "_ratio_new_handle_vs_curl", "curl-new-handle", "curl")
    f.key("get_concurrent_cpu_ratio_new_handle_vs_curl", concCPU, "curl-new-handle", "curl")
    f.both("get", "_ratio_transport_vs_curl", "transport-curl", "curl")
    f.key("get_concurrent_cpu_ratio_transport_vs_curl", concCPU, "transport-curl", "curl")
    // The floor of a design with an engine thread: libcurl driven directly plus the two wake-ups of a hand-over
    // ("hop", measured alone), over libcurl — what no cut inside the library can go under.
    f.floor("get", "curl", "hop")
    f.floor("post", "post-curl", "hop")
    f.both("get", "_ratio_curl_vs_raw", "curl", "raw")
    f.both("post", "_ratio_curl_vs_raw", "post-curl", "post-raw")
    f.key("get_concurrent_cpu_ratio_curl_vs_raw", concCPU, "curl", "raw")
    f.key("get_concurrent_cpu_ratio_transport", concCPU, "transport-curl", "raw")
    // URLSessionTransport, the transport used where libcurl is missing (and the library's Linux default before
    // CurlTransport): its figures as they were measured before, under names that say so.
    f.both("get", "_ratio_urlsession_transport", "lib-urlsession", "raw")
    f.both("get", "_ratio_keepalive", "lib-keepalive", "raw")
    f.both("get", "_ratio_both_close", "lib-close", "raw-close")
    f.key("connection_close_cost_sequential", seq, "lib-close", "lib-keepalive")
    f.key("connection_close_cost_concurrent", conc, "lib-close", "lib-keepalive")
    f.key("get_concurrent_cpu_ratio_urlsession_transport_alone", concCPU, "transport-keepalive", "raw")
    f.both("post", "_ratio_urlsession_transport", "post-lib-urlsession", "post-raw")
    f.both("post", "_ratio_urlsession_transport_both_close", "post-lib-urlsession", "post-raw-close")
    f.key("post_concurrent_cpu_ratio_urlsession_transport_both_close", concCPU, "post-lib-urlsession", "post-raw-close")
    f.key("post_raw_close_ratio", seq, "post-raw-close", "post-raw")
    f.key("post_raw_close_ratio_concurrent", conc, "post-raw-close", "post-raw")
    // FoundationNetworking's own costs, measured on raw URLSession: the completion handler's hop through the delegate
    // queue, and a session without a URLCache.
    f.key("completion_hop_cost_concurrent", conc, "raw-handler", "raw")
    f.key("completion_hop_cpu_cost_concurrent", concCPU, "raw-handler", "raw")
    f.key("get_sequential_ratio_vs_raw_without_cache", seq, "lib", "raw-nocache")
    f.key("get_concurrent_ratio_vs_raw_without_cache", conc, "lib", "raw-nocache")
    f.key("no_cache_cost_sequential", seq, "raw-nocache", "raw")
    f.key("no_cache_cost_concurrent", conc, "raw-nocache", "raw")
    f.key("no_cache_cpu_cost_concurrent", concCPU, "raw-nocache", "raw")
    return f.results
}

/// What each group's `…_bench_setup` key says about how it was measured.
func setup(_ group: Group, _ settings: Settings) -> String {
    let what = switch group {
    case .get: "~1 KB StaffMemberPage"
    case .post: "POST /v2/write-quiet, \((try? writeEncoder().encode(WriteBody()))?.count ?? 0)-byte JSON body with "
        + "Idempotency-Key, {\"length\": n} answer"
    }
    return "loopback tools/loopback_server.py, \(what), \(settings.rounds) rounds of \(settings.sequential) sequential and "
        + "\(settings.concurrentTasks)x\(settings.concurrentPerTask) concurrent, interleaved; medians; lib = ProfirestApi "
        + "with its default transport (CurlTransport on Linux); curl = libcurl driven directly (one easy handle reused "
        + "sequentially, \(settings.concurrentTasks) easy handles on one multi handle concurrently, a thread of its own)"
}

/// The parts of the bench, in the order they run (get, post and curl share one interleaved comparison).
let parts = ["get", "post", "curl", "sse", "idle", "paging", "stampede", "outbox", "net50", "compress", "partner", "build"]

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
        case "sse-idle": return try await idleStreamsChild(base: base, arguments)
        case "sse-idle-raw": return try await idleRawURLSessionChild(base: base, arguments)
        case "paging-memory": return try await pagingMemoryChild(base: base)
        case "partner-run": return try await partnerChild(base: base, arguments)
        default: throw BenchFailure("unknown --child \(arguments[child + 1])")
        }
    }
    let settings = Settings(CommandLine.arguments)
    let chosen = try chosenParts(settings)
    var machine = machineDescription()
    machine["load_average_at_start"] = loadAverage()
    machine["default_transport"] = defaultTransportDescription()
    FileHandle.standardError.write(Data("bench: the library's default transport here is \(machine["default_transport"]!)\n".utf8))
    let started = Date()
    // Each part's keys are merged into the file as soon as it is done.
    func save(_ results: [String: Any]) throws {
        machine["load_average_at_end"] = loadAverage()
        machine["date"] = ISO8601DateFormatter().string(from: Date())
        var results = results
        results["bench_machine"] = machine
        try merge(results, into: settings.output)
    }
    let compared = Set(chosen).intersection(["get", "post", "curl"])
    if !compared.isEmpty { try save(try await compare(compared, settings)) }
    if chosen.contains("sse") { try save(try await eventStreamResults(CommandLine.arguments)) }
    if chosen.contains("idle") { try save(try await idleStreamResults(CommandLine.arguments)) }
    if chosen.contains("paging") { try save(try await pagingResults(CommandLine.arguments)) }
    if chosen.contains("stampede") { try save(try await stampedeResults(CommandLine.arguments)) }
    if chosen.contains("net50") { try save(try await realNetworkResults(CommandLine.arguments)) }
    if chosen.contains("compress") { try save(try await compressionResults(CommandLine.arguments)) }
    if chosen.contains("outbox") { try save(try await outboxResults(CommandLine.arguments)) }
    if chosen.contains("partner") { try save(try await partnerResults(CommandLine.arguments)) }
    // Last: a clean build takes both cores for minutes.
    if chosen.contains("build") { try save(try buildTimeResults()) }
    FileHandle.standardError.write(Data(String(format: "bench: %@ in %.0f s\n", chosen.joined(separator: ", "),
        Date().timeIntervalSince(started)).utf8))
}

/// The transport `ProfirestApi` takes when its options name none — what every "lib" figure measures: on Linux
/// CurlTransport and its libcurl, unless libcurl could not be used and the client fell back to URLSessionTransport
/// (which its observer hears, and the bench then says).
func defaultTransportDescription() -> String {
    final class Fallback: @unchecked Sendable {
        // @unchecked: `reason` is guarded by `lock`.
        private let lock = NSLock()
        private var reason: String?
        func set(_ text: String) { lock.lock(); reason = text; lock.unlock() }
        var seen: String? { lock.lock(); defer { lock.unlock() }; return reason }
    }
    let fallback = Fallback()
    _ = ProfirestApi(options: .init(observer: { if case .transportFallback(let reason) = $0 { fallback.set(reason) } }))
    if let reason = fallback.seen { return "URLSessionTransport (the fallback: \(reason))" }
    #if os(Linux)
    return "CurlTransport (\(CurlTransport.version ?? "?"))"
    #else
    return "URLSessionTransport"
    #endif
}

/// The GET, POST and direct-curl comparisons, every variant that serves one of `chosen` interleaved round by round.
func compare(_ chosen: Set<String>, _ settings: Settings) async throws -> [String: Any] {
    let server = try Server(script: settings.serverScript)
    defer { server.stop() }
    let variants = try makeVariants(port: server.port, parts: chosen, chosen: settings.variants)
    guard !variants.isEmpty else { throw BenchFailure("--variants named none of the variants these parts run") }
    for variant in variants { _ = try await variant.sequential(50) }  // warm up connections and caches

    var seq: Times = [:]
    var conc: Times = [:]
    var concCPU: Times = [:]  // µs of CPU per request, concurrent
    var serverCPU: Times = [:]  // µs of the loopback server's CPU per request, concurrent
    let serverPID = server.server.process.processIdentifier
    for round in 0..<settings.rounds {
        // Rotate the order each round so no variant always runs first.
        let order = (0..<variants.count).map { variants[($0 + round) % variants.count] }
        for variant in order {
            seq[variant.name, default: []].append(try await variant.sequential(settings.sequential))
        }
        for variant in order {
            let cpu = cpuMicroseconds()
            let serverStart = cpuMicroseconds(of: serverPID)
            conc[variant.name, default: []].append(
                try await variant.concurrent(settings.concurrentTasks, settings.concurrentPerTask))
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
    var results = comparisonFigures(seq: seq, conc: conc, concCPU: concCPU)
    for group in Group.allCases {
        let ofGroup = variants.filter { $0.group == group }
        guard !ofGroup.isEmpty else { continue }
        var perRequest: [String: Any] = [:]
        for variant in ofGroup {
            perRequest[variant.name] = [
                "sequential": rounded(s[variant.name]!), "concurrent_64": rounded(c[variant.name]!),
                "concurrent_64_cpu_us": rounded(cpu[variant.name]!),
                "concurrent_64_server_cpu_us": rounded(serverCost[variant.name]!),
            ]
        }
        results["\(group.rawValue)_ms_per_request"] = perRequest
        results["\(group.rawValue)_bench_setup"] = setup(group, settings)
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
