// The real network at +50 ms each way: tools/net_harness.py's nginx (TLS from a private CA; the `h2` block with
// HTTP/2, the `h1` block HTTP/1.1 only) in front of tools/loopback_server.py, reached through the harness's TCP proxy
// that delays every chunk 50 ms each way (a request on a kept connection: 100 ms; a new TLS connection: 100 ms more).
// The library with its default transport (`trustedCertificates: .pemFile(caFile)`) against raw URLSession (default
// configuration, keep-alive, its usual Linux behaviour), interleaved, the order alternating round by round:
//
//   net50_get_after_idle_ratio_<h1|h2>      a GET + decode after 2 s idle: each round both sides make a GET (a warm
//                                           connection), then after 2 s the timed GET of each
//   net50_post_sequential_ratio_<h1|h2>     20 POSTs one after the other (the ~200-byte JSON body with its
//                                           Idempotency-Key to /v2/write-quiet, the answer decoded), per POST
//   net50_post_concurrent_ratio_<h1|h2>     64 such POSTs in flight at once, the whole batch's wall time
//   net50_<figure>_ms_<lib|raw>_<h1|h2>     the medians behind each ratio, ms (per GET, per POST, per batch of 64);
//                                           net50_rounds_ms has every round's (the first batch of 64 over HTTP/1.1
//                                           opens the connections the later ones reuse)
//
// Ratios are library ÷ raw, medians of the per-round ratios (target <= 1.0: on a real network the library should never
// be the slower one). `net50_wire` says what each side did on the wire (nginx's X-Served-Protocol and
// X-Client-Connection headers, from a separate pass after the measured rounds): the protocol, whether the GET after
// 2 s idle went on the warm connection, and how many connections 5 sequential and 64 concurrent POSTs used.
//
// Raw URLSession on Linux trusts only the system store, so this part installs the harness's CA there
// (/usr/local/share/ca-certificates/profirest-bench-<pid>.crt + update-ca-certificates) and removes it again at the end,
// also when the part fails or the bench is interrupted (SIGINT, SIGTERM, SIGHUP). It needs root for that, and nginx;
// without either it is skipped with the reason printed.
import Foundation
import ProfirestAPI
import ProfirestTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The harness's CA in the system store for as long as this part runs.
final class SystemTrust: @unchecked Sendable {
    // @unchecked: `installed` is guarded by `lock`; `path` never changes.
    let path = "/usr/local/share/ca-certificates/profirest-bench-\(getpid()).crt"
    private let lock = NSLock()
    private var installed = false
    private var signalSources: [DispatchSourceSignal] = []

    init(caFile: String) throws {
        try FileManager.default.createDirectory(atPath: "/usr/local/share/ca-certificates", withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: caFile, toPath: path)
        lock.lock()
        installed = true
        lock.unlock()
        // An interrupted bench removes the certificate too: these signals go through here before the process ends.
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { [self] in
                FileHandle.standardError.write(Data("net50: signal \(signalNumber), removing \(path)\n".utf8))
                remove()
                exit(128 + signalNumber)
            }
            source.resume()
            signalSources.append(source)
        }
        do {
            try Self.updateCertificates()
        } catch {
            remove()
            throw error
        }
    }

    /// Removes the certificate and rebuilds the system bundle without it; once, whoever calls first.
    func remove() {
        lock.lock()
        let wasInstalled = installed
        installed = false
        lock.unlock()
        guard wasInstalled else { return }
        try? FileManager.default.removeItem(atPath: path)
        do {
            try Self.updateCertificates()
        } catch {
            FileHandle.standardError.write(Data("net50: \(error) — run update-ca-certificates by hand\n".utf8))
        }
        for source in signalSources { source.cancel() }
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] { signal(signalNumber, SIG_DFL) }
    }

    /// Runs `update-ca-certificates`, which rebuilds /etc/ssl/certs/ca-certificates.crt (the bundle libcurl reads).
    static func updateCertificates() throws {
        let process = Process()
        let sbin = "/usr/sbin/update-ca-certificates"
        if FileManager.default.isExecutableFile(atPath: sbin) {
            process.executableURL = URL(fileURLWithPath: sbin)
            process.arguments = []
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["update-ca-certificates"]
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchFailure("update-ca-certificates failed (status \(process.terminationStatus)): \(text)")
        }
    }
}

/// One side of the comparison on one nginx block: a GET + decode, a POST + decode, and the same with the answer's
/// headers for the wire pass.
struct NetSide: Sendable {
    let name: String
    let get: @Sendable () async throws -> Int
    let post: @Sendable () async throws -> Int
    /// (X-Served-Protocol, X-Client-Connection) of a GET and of a POST.
    let getWire: @Sendable () async throws -> (String, String)
    let postWire: @Sendable () async throws -> (String, String)
}

func netSides(_ net: NetHarness, _ block: NetHarness.Block, raw session: URLSession) -> [NetSide] {
    let decoder = JSONDecoder()
    let encoder = writeEncoder()
    let api = ProfirestApi(options: .init(baseURL: net.base(block, delayed: true), trustedCertificates: .pemFile(net.caFile)))
    let getURL = net.url(block, "/v2/staff", delayed: true)
    let postURL = net.url(block, "/v2/write-quiet", delayed: true)
    @Sendable func wire(_ headers: (String) -> String?) -> (String, String) {
        (headers("X-Served-Protocol") ?? "?", headers("X-Client-Connection") ?? "?")
    }
    @Sendable func rawGet() async throws -> (Data, HTTPURLResponse) {
        var request = URLRequest(url: getURL)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else { throw URLError(.badServerResponse) }
        return (data, http)
    }
    // The headers the library sends with a JSON POST, a fresh Idempotency-Key each time, the body encoded per request.
    @Sendable func rawPost() async throws -> (Data, HTTPURLResponse) {
        var request = URLRequest(url: postURL)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("ProfirestAPI-Swift/1.0.0", forHTTPHeaderField: "User-Agent")
        request.setValue(UUID().uuidString.lowercased(), forHTTPHeaderField: "Idempotency-Key")
        request.httpBody = try encoder.encode(WriteBody())
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else { throw URLError(.badServerResponse) }
        return (data, http)
    }
    return [
        NetSide(
            name: "lib",
            get: { try await api.get("/staff", as: StaffMemberPage.self).data.count },
            post: { try await api.post("/write-quiet", body: WriteBody(), as: WriteAnswer.self).length },
            getWire: { wire(try await api.send("GET", "/staff").header) },
            postWire: { wire(try await api.send("POST", "/write-quiet", body: WriteBody()).header) }),
        NetSide(
            name: "raw",
            get: { try decoder.decode(StaffMemberPage.self, from: try await rawGet().0).data.count },
            post: { try decoder.decode(WriteAnswer.self, from: try await rawPost().0).length },
            getWire: { let r = try await rawGet().1; return wire { r.value(forHTTPHeaderField: $0) } },
            postWire: { let r = try await rawPost().1; return wire { r.value(forHTTPHeaderField: $0) } }),
    ]
}

func elapsedMilliseconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
}

func realNetworkResults(_ arguments: [String]) async throws -> [String: Any] {
    func flag(_ name: String, _ fallback: Int) -> Int {
        arguments.value(after: name).flatMap(Int.init).map { max(1, $0) } ?? fallback
    }
    let rounds = flag("--net-rounds", 7)
    let sequentialPosts = flag("--net-sequential", 20)
    let inFlight = 64
    let delay = 50.0
    // Putting a CA into the system store takes writing there (root, as CI runs).
    guard FileManager.default.isWritableFile(atPath: "/usr/local/share/ca-certificates") else {
        FileHandle.standardError.write(Data(("net50: skipped — raw URLSession on Linux trusts only the system store, and "
            + "putting the harness's CA there (update-ca-certificates) needs root\n").utf8))
        return [:]
    }
    let server = try Server(script: "tools/loopback_server.py")
    defer { server.stop() }
    let net: NetHarness
    do {
        net = try NetHarness(
            upstream: "http://127.0.0.1:\(server.port)", delayMilliseconds: delay,
            root: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
    } catch let missing as NetHarness.Unavailable {
        FileHandle.standardError.write(Data("net50: skipped — \(missing) (apt-get install nginx)\n".utf8))
        return [:]
    }
    defer { net.stop() }
    let trust = try SystemTrust(caFile: net.caFile)
    defer { trust.remove() }
    FileHandle.standardError.write(Data("net50: nginx \(net.nginxVersion), +\(Int(delay)) ms each way, CA in \(trust.path)\n".utf8))

    // Made after the CA is in the system store (libcurl reads the bundle for each new TLS connection of a session).
    let session = URLSession(configuration: .default)
    // Raw URLSession must trust the CA now (straight to nginx, no delay), or its figures would be failures.
    for block in [NetHarness.Block.h2, .h1] {
        var request = URLRequest(url: net.url(block, "/v2/staff"))
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        do {
            let (_, response) = try await session.data(for: request)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
        } catch {
            throw BenchFailure("net50: raw URLSession does not trust the harness's CA after update-ca-certificates "
                + "(\(block.rawValue)): \(error)")
        }
    }

    var results: [String: Any] = [:]
    var wireResults: [String: Any] = [:]
    var everyRound: [String: [Double]] = [:]
    for block in [NetHarness.Block.h2, .h1] {
        let suffix = block.rawValue
        let sides = netSides(net, block, raw: session)
        // Warm up: connections, TLS sessions, the decoders.
        for side in sides {
            for _ in 0..<3 { _ = try await side.get() }
            for _ in 0..<3 { _ = try await side.post() }
        }
        var idle: [String: [Double]] = [:]
        var sequential: [String: [Double]] = [:]
        var concurrent: [String: [Double]] = [:]
        for round in 0..<rounds {
            let order = round % 2 == 0 ? sides : sides.reversed()
            // (a) Both warm, both idle 2 s (plus the other side's request), then the timed GETs.
            for side in order { _ = try await side.get() }
            try await Task.sleep(nanoseconds: 2_000_000_000)
            for side in order { idle[side.name, default: []].append(try await elapsedMilliseconds { _ = try await side.get() }) }
            // (b) Sequential POSTs, per POST.
            for side in order {
                let ms = try await elapsedMilliseconds { for _ in 0..<sequentialPosts { _ = try await side.post() } }
                sequential[side.name, default: []].append(ms / Double(sequentialPosts))
            }
            // (c) 64 POSTs in flight, the whole batch.
            for side in order {
                let ms = try await elapsedMilliseconds {
                    try await withThrowingTaskGroup(of: Int.self) { group in
                        for _ in 0..<inFlight { group.addTask { try await side.post() } }
                        for try await _ in group {}
                    }
                }
                concurrent[side.name, default: []].append(ms)
            }
            FileHandle.standardError.write(Data(String(
                format: "net50 %@ round %d/%d: GET after idle %.0f / %.0f ms, POST %.0f / %.0f ms, 64 POSTs %.0f / %.0f ms (lib / raw)\n",
                suffix, round + 1, rounds, idle["lib"]!.last!, idle["raw"]!.last!, sequential["lib"]!.last!,
                sequential["raw"]!.last!, concurrent["lib"]!.last!, concurrent["raw"]!.last!).utf8))
        }
        for (figure, times) in [("get_after_idle", idle), ("post_sequential", sequential), ("post_concurrent", concurrent)] {
            results["net50_\(figure)_ratio_\(suffix)"] = rounded(median(zip(times["lib"]!, times["raw"]!).map { $0 / $1 }))
            results["net50_\(figure)_ms_lib_\(suffix)"] = rounded(median(times["lib"]!))
            results["net50_\(figure)_ms_raw_\(suffix)"] = rounded(median(times["raw"]!))
            for side in ["lib", "raw"] { everyRound["\(figure)_\(side)_\(suffix)"] = times[side]!.map(rounded) }
        }

        // What each side did on the wire, in a pass of its own after the measured rounds.
        var warm: [String: (String, String)] = [:]
        for side in sides { warm[side.name] = try await side.getWire() }
        try await Task.sleep(nanoseconds: 2_000_000_000)
        for side in sides {
            let afterIdle = try await side.getWire()
            var sequentialConnections: Set<String> = []
            for _ in 0..<5 { sequentialConnections.insert(try await side.postWire().1) }
            let concurrentConnections = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<inFlight { group.addTask { try await side.postWire().1 } }
                var seen: Set<String> = []
                for try await connection in group { seen.insert(connection) }
                return seen
            }
            wireResults["\(side.name)_\(suffix)"] = [
                "protocol": afterIdle.0,
                "get_after_idle_on_warm_connection": afterIdle.1 == warm[side.name]!.1,
                "post_sequential_connections_of_5": sequentialConnections.count,
                "post_concurrent_connections_of_64": concurrentConnections.count,
            ] as [String: Any]
        }
    }
    results["net50_wire"] = wireResults
    results["net50_rounds_ms"] = everyRound
    results["net50_bench_setup"] = "tools/net_harness.py (nginx \(net.nginxVersion), TLS from a private CA, blocks h2 and h1) in "
        + "front of tools/loopback_server.py, through its TCP proxy adding \(Int(delay)) ms each way; library = ProfirestApi "
        + "with its default transport and trustedCertificates .pemFile(CA); raw = URLSession(configuration: .default) "
        + "data(for:) + JSONDecoder, the CA in the system store (update-ca-certificates); \(rounds) rounds interleaved "
        + "(order alternating): a GET of /v2/staff after 2 s idle on a warm connection, \(sequentialPosts) sequential "
        + "POSTs (the ~200-byte JSON body with Idempotency-Key to /v2/write-quiet, per POST), \(inFlight) POSTs in "
        + "flight (the batch); ratios = medians of per-round lib / raw"
    for key in results.keys.sorted() { print(key, results[key]!) }
    return results
}
