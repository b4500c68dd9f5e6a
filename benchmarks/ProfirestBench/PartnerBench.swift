// The partner part: one process serving a thousand restaurants — a partner's backend — against the sandbox, each
// restaurant a connection of its own (a consent created in bulk, `POST /_sandbox/consents/bulk`), all sharing one
// storage (a key per connection) and the default transport, each following its event feed (`eventWatcher(...).run()`),
// the sandbox's event generator writing 1 event a second for every restaurant (`POST /_sandbox/events/generator`).
// Every figure is from one run of a fresh child process (`--child partner-run`), whose heap holds nothing of the
// bench's other parts, and which talks to the sandbox's admin API over plain sockets (no URLSession: its threads
// and memory would count as the library's):
//
//   partner_rss_per_connection_kb   (resident memory at the end of the active phase − before the first client was
//                                   made, after one request had loaded the transport) ÷ connections; the feeds started
//                                   in waves of --partner-wave (100), each streaming before the next, as the article
//                                   advises; partner_rss_per_connection_kb_all_at_once the same in a fresh process that
//                                   starts them all at once (1,000 requests in flight leave their frames in the heap)
//   partner_threads                 the process's threads, the most seen at the ends of its phases (all feeds live)
//   partner_idle_cpu_percent        CPU time ÷ wall time × 100 over --partner-idle-seconds (30) with every feed's
//                                   stream open and no events (keep-alives only, every 15 s per stream)
//   partner_event_p50_ms, partner_event_p99_ms
//                                   from the event's `occurred_at` (the sandbox wrote it, to the millisecond) to
//                                   `onEvents`, every event of --partner-active-seconds (30) with all restaurants active
//   partner_event_p99_ms_with_failing_feeds
//                                   the same for the other restaurants while four feeds fail for
//                                   --partner-fault-seconds (20): one consent revoked (401 → refresh → invalid_grant →
//                                   not_paired), one feed's requests answered 503 (an outage), one answered 410
//                                   cursor_expired, one connection's access token expired (401 → refresh); each stream
//                                   cut so that it must reconnect. The revoked one must be reported once
//                                   (`partner_revoked_reports`), the others must not notice (`partner_others_disturbed`)
//   partner_gaps                    events of the server's feed, from the start to the end, that a feed never
//                                   delivered, summed over the restaurants (the revoked one and the reset one left out:
//                                   those stop or skip by design); partner_duplicates the events delivered twice
//   partner_tcp_connections         the same clients through nginx over HTTP/2 (tools/net_harness.py, its h2 block
//                                   allowed 2 × connections streams per connection): the most TCP connections this
//                                   process had open to nginx at once while every feed streamed events, counted
//                                   every 0.5 s; partner_active_cpu_percent_h2 is that run's active CPU without the
//                                   counting's own (read on the counting thread: it parses the machine's socket tables)
//   partner_active_cpu_percent_transport(_h2), partner_cpu_us_per_event_transport(_h2)
//                                   the floor under both: the same streams read straight from the transport
//                                   (PartnerTransportFloor.swift)
//
// `--only partner` runs this part alone; --partner-connections (1000) sets the size, --partner-net 0 leaves nginx
// out. Without nginx the TCP figure is skipped with the reason.
import Foundation
import ProfirestAPI
import ProfirestTestSupport
#if canImport(Glibc)
import Glibc
#endif

struct PartnerSettings {
    var connections = 1_000
    var idleSeconds = 30.0
    var activeSeconds = 30.0
    var faultSeconds = 20.0
    /// Feeds started at a time, each wave streaming before the next (0: all at once).
    var wave = 100
    var net = true

    init(_ arguments: [String]) {
        let value = arguments.value(after:)
        connections = value("--partner-connections").flatMap(Int.init).map { max(8, $0) } ?? connections
        idleSeconds = value("--partner-idle-seconds").flatMap(Double.init) ?? idleSeconds
        activeSeconds = value("--partner-active-seconds").flatMap(Double.init) ?? activeSeconds
        faultSeconds = value("--partner-fault-seconds").flatMap(Double.init) ?? faultSeconds
        wave = value("--partner-wave").flatMap(Int.init).map { max(0, $0) } ?? wave
        net = value("--partner-net") != "0"
    }

    var childArguments: [String] {
        ["--partner-connections", "\(connections)", "--partner-idle-seconds", "\(idleSeconds)",
         "--partner-active-seconds", "\(activeSeconds)", "--partner-fault-seconds", "\(faultSeconds)",
         "--partner-wave", "\(wave)"]
    }
}

func partnerResults(_ arguments: [String]) async throws -> [String: Any] {
    let settings = PartnerSettings(arguments)
    let sandbox = try Sandbox(python: Sandbox.defaultPython)
    defer { sandbox.stop() }
    FileHandle.standardError.write(Data("partner: \(settings.connections) connections against the sandbox\n".utf8))
    let direct = try runChild(["--child", "partner-run", "--base", sandbox.api, "--admin", sandbox.api, "--mode", "full"]
        + settings.childArguments)
    var results: [String: Any] = [:]
    for (key, value) in direct where key.hasPrefix("partner_") { results[key] = value }
    results["partner_details"] = direct["details"]
    // The same clients started all at once, in a fresh process: the burst's cost in memory.
    try await sandbox.admin("POST", "reset")
    let burst = try runChild(["--child", "partner-run", "--base", sandbox.api, "--admin", sandbox.api, "--mode", "burst"]
        + settings.childArguments)
    results["partner_rss_per_connection_kb_all_at_once"] = burst["partner_rss_per_connection_kb_all_at_once"]
    // The floor: the same streams read straight from the transport (PartnerTransportFloor.swift).
    try await sandbox.admin("POST", "reset")
    let floor = try runChild(["--child", "partner-run", "--base", sandbox.api, "--admin", sandbox.api, "--mode", "transport"]
        + settings.childArguments)
    results["partner_active_cpu_percent_transport"] = floor["partner_active_cpu_percent_transport"]
    results["partner_cpu_us_per_event_transport"] = floor["partner_cpu_us_per_event_transport"]
    guard settings.net else { return results }
    // The same through nginx over HTTP/2: how many TCP connections the thousand streams take.
    let net: NetHarness
    do {
        net = try NetHarness(
            upstream: sandbox.api, h2MaxStreams: 2 * settings.connections,
            root: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
    } catch let missing as NetHarness.Unavailable {
        FileHandle.standardError.write(Data("partner: the HTTP/2 figure skipped — \(missing) (apt-get install nginx)\n".utf8))
        return results
    }
    defer { net.stop() }
    try await sandbox.admin("POST", "reset")
    let h2 = try runChild(["--child", "partner-run", "--base", net.base(.h2), "--admin", sandbox.api, "--mode", "tcp",
                           "--ca", net.caFile] + settings.childArguments)
    results["partner_tcp_connections"] = h2["partner_tcp_connections"]
    results["partner_event_p99_ms_h2"] = h2["partner_event_p99_ms"]
    results["partner_active_cpu_percent_h2"] = h2["partner_active_cpu_percent"]
    results["partner_cpu_us_per_event_h2"] = h2["partner_cpu_us_per_event"]
    results["partner_h2_details"] = h2["details"]
    try await sandbox.admin("POST", "reset")
    let h2Floor = try runChild(["--child", "partner-run", "--base", net.base(.h2), "--admin", sandbox.api, "--mode", "transport",
                                "--ca", net.caFile] + settings.childArguments)
    results["partner_active_cpu_percent_transport_h2"] = h2Floor["partner_active_cpu_percent_transport"]
    results["partner_cpu_us_per_event_transport_h2"] = h2Floor["partner_cpu_us_per_event_transport"]
    return results
}

// MARK: - The child process

/// What the feeds of the child saw: per connection counts, and the latency of every event in the measured phases
/// (a fixed histogram, allocated before the baseline, so the measurement adds no memory per event).
final class PartnerFeeds: @unchecked Sendable {
    // @unchecked: every stored property is guarded by `lock`.
    enum Phase { case none, active, faults }

    private let lock = NSLock()
    private var received: [Int]
    private var unpaired: [Int]
    private var resets: [Int]
    private var errors: [Int]
    private var lastError: [String?]
    private var ended: [Bool]
    private var victims: Set<Int> = []
    private var phase = Phase.none
    private var active = LatencyHistogram()
    private var others = LatencyHistogram()

    init(count: Int) {
        received = Array(repeating: 0, count: count)
        unpaired = Array(repeating: 0, count: count)
        resets = Array(repeating: 0, count: count)
        errors = Array(repeating: 0, count: count)
        lastError = Array(repeating: nil, count: count)
        ended = Array(repeating: false, count: count)
    }

    /// The feed's `run()` returned.
    func end(_ index: Int) { lock.lock(); ended[index] = true; lock.unlock() }
    func hasEnded(_ index: Int) -> Bool { lock.lock(); defer { lock.unlock() }; return ended[index] }

    func events(_ index: Int, _ events: [Event]) {
        let now = Date()
        lock.lock()
        defer { lock.unlock() }
        received[index] += events.count
        for event in events {
            let milliseconds = now.timeIntervalSince(event.occurredAt) * 1000
            switch phase {
            case .none: break
            case .active: active.add(milliseconds)
            case .faults: if !victims.contains(index) { others.add(milliseconds) }
            }
        }
    }

    func lost(_ index: Int) { lock.lock(); unpaired[index] += 1; lock.unlock() }
    func reset(_ index: Int) { lock.lock(); resets[index] += 1; lock.unlock() }
    func failed(_ index: Int, _ error: any Error) {
        let code = (error as? ProfirestAPIError)?.code ?? "\(type(of: error))"
        lock.lock()
        errors[index] += 1
        lastError[index] = code
        lock.unlock()
    }

    func start(_ phase: Phase, victims: Set<Int> = []) {
        lock.lock()
        self.phase = phase
        self.victims = victims
        lock.unlock()
    }

    var snapshot: (received: [Int], unpaired: [Int], resets: [Int], errors: [Int], lastError: [String?],
                   active: LatencyHistogram, others: LatencyHistogram) {
        lock.lock()
        defer { lock.unlock() }
        return (received, unpaired, resets, errors, lastError, active, others)
    }
}

/// Latencies in 0.1 ms steps up to 10 s, and the few beyond kept as they are.
struct LatencyHistogram {
    private var bins = [Int32](repeating: 0, count: 100_000)
    private var beyond: [Double] = []
    private(set) var count = 0

    mutating func add(_ milliseconds: Double) {
        count += 1
        let bin = Int((max(0, milliseconds) * 10).rounded(.down))
        if bin < bins.count { bins[bin] += 1 } else { beyond.append(milliseconds) }
    }

    /// The `p` quantile (0…1), to 0.1 ms; NaN when empty.
    func quantile(_ p: Double) -> Double {
        guard count > 0 else { return .nan }
        let rank = max(1, Int((p * Double(count)).rounded(.up)))
        var seen = 0
        for (bin, n) in bins.enumerated() where n > 0 {
            seen += Int(n)
            if seen >= rank { return Double(bin + 1) / 10 }
        }
        return beyond.sorted()[min(beyond.count - 1, rank - seen - 1)]
    }
}

struct PartnerChildSettings {
    let base: String
    let admin: String
    let mode: String
    let ca: String?
    let partner: PartnerSettings

    init(base: String, _ arguments: [String]) {
        let value = arguments.value(after:)
        self.base = base
        admin = value("--admin") ?? base
        mode = value("--mode") ?? "full"
        ca = value("--ca")
        partner = PartnerSettings(arguments)
    }
}

func partnerChild(base: String, _ arguments: [String]) async throws {
    let settings = PartnerChildSettings(base: base, arguments)
    let n = settings.partner.connections
    raiseOpenFileLimit()
    let admin = PlainHTTP(base: settings.admin)
    let began = Date()
    let log = { (line: String) in
        FileHandle.standardError.write(Data(String(format: "partner: %5.1f s %@\n", Date().timeIntervalSince(began), line).utf8))
    }

    // The restaurants: a consent each, with its tokens (as owners who consented earlier left them).
    let bulk = try admin.json("POST", "/_sandbox/consents/bulk",
                              ["count": n, "client_id": "moje-aplikace", "scope": "restaurants:read events:read"])
    guard let rows = bulk["data"] as? [[String: Any]], rows.count == n else { throw BenchFailure("bulk consents: \(bulk)") }
    let restaurants = rows.map { $0["restaurant_id"] as? String ?? "" }
    let grants = rows.map { $0["connection_id"] as? String ?? "" }
    let trusted = settings.ca.map { TrustedCertificates.pemFile($0) }

    // Warm up: the default transport (libcurl, its thread) and the decoders, through a client made and dropped.
    do {
        let warm = ProfirestApi(options: .init(
            baseURL: settings.base, accessToken: rows[0]["access_token"] as? String, trustedCertificates: trusted))
        let _: Connection = try await warm.get("/connection")
    }
    if settings.mode == "transport" {
        try await partnerTransportFloor(base: settings.base, admin: admin, rows: rows, restaurants: restaurants,
                                        trusted: trusted, activeSeconds: settings.partner.activeSeconds, log: log)
        return
    }
    let feeds = PartnerFeeds(count: n)
    try await Task.sleep(nanoseconds: 1_000_000_000)
    let baseline = residentMB()
    let baselineThreads = processSwitchesAndThreads().threads

    // The partner's storage: one for every connection, a key each, holding the connection's state document.
    let storage = MemoryTokenStorage()
    for (index, row) in rows.enumerated() { try storage.set(partnerKey(restaurants[index]), try partnerStateDocument(row)) }
    var watchers: [EventWatcher] = []
    var runs: [Task<Void, Never>] = []
    var clients: [ProfirestApi] = []
    let opened = Date()
    for index in 0..<n {
        let api = ProfirestApi(options: .init(
            baseURL: settings.base, clientID: "moje-aplikace", storage: storage,
            storageKey: partnerKey(restaurants[index]), onUnpaired: { _ in feeds.lost(index) },
            trustedCertificates: trusted))
        let watcher = api.eventWatcher(.init(
            restaurantID: restaurants[index],
            onEvents: { events in feeds.events(index, events) },
            onReset: { _ in feeds.reset(index) },
            onError: { error in feeds.failed(index, error) }))
        clients.append(api)
        watchers.append(watcher)
        runs.append(Task {
            await watcher.run()
            feeds.end(index)
        })
        // In waves, as the article advises: each wave streams before the next starts (0: all at once).
        let wave = settings.mode == "burst" ? 0 : settings.partner.wave
        if wave > 0, (index + 1) % wave == 0 {
            try await waitStreaming(watchers, limit: 180)
        }
    }
    try await waitStreaming(watchers, limit: 180)
    log(String(format: "%d feeds streaming after %.1f s", n, Date().timeIntervalSince(opened)))
    if settings.mode == "burst" {
        // All at once: what the thousand requests in flight leave in the heap (BENCHMARKS.md, "Serving many").
        try await Task.sleep(nanoseconds: 5_000_000_000)
        let rss = residentMB()
        log(String(format: "all at once: %.1f MB (%.1f KB a connection)", rss, (rss - baseline) * 1024 / Double(n)))
        for watcher in watchers { watcher.stop() }
        try printJSONLine(["partner_rss_per_connection_kb_all_at_once": rounded((rss - baseline) * 1024 / Double(n)),
                           "threads": processSwitchesAndThreads().threads])
        return
    }
    var details: [String: Any] = ["connections": n, "seconds_to_stream": rounded(Date().timeIntervalSince(opened)),
                                  "baseline_rss_mb": rounded(baseline), "baseline_threads": baselineThreads]
    var threads = processSwitchesAndThreads().threads
    // Where the feed ends now: the gap check counts the server's events from here.
    let start: EventPage = try await clients[0].get("/events")

    var results: [String: Any] = [:]
    if settings.mode == "full" {
        // Idle: every stream open, no events.
        try await Task.sleep(nanoseconds: 5_000_000_000)
        let idle = try await idleCPU(seconds: settings.partner.idleSeconds)
        results["partner_idle_cpu_percent"] = rounded(idle["cpu_percent"] ?? .nan)
        details["idle"] = idle.mapValues(rounded)
        details["idle_rss_mb"] = rounded(residentMB())
        threads = max(threads, processSwitchesAndThreads().threads)
        log(String(format: "idle: %.3f %% CPU, %d threads, %.1f MB", idle["cpu_percent"] ?? .nan, threads, residentMB()))
    }

    // Active: every restaurant 1 event a second.
    let generator = try admin.json("POST", "/_sandbox/events/generator", ["rate": 1, "client_id": "moje-aplikace"])
    guard generator["running"] as? Bool == true else { throw BenchFailure("the event generator: \(generator)") }
    try await Task.sleep(nanoseconds: 5_000_000_000)  // every feed has had events: warm
    let cpuStart = processCPUSeconds()
    let wallStart = Date()
    feeds.start(.active)
    var maxTCP = 0
    // The bench's own count of TCP connections reads the machine's whole socket tables (thousands of lines with
    // nginx's upstream connections in them): its CPU, measured on the thread that counts, is not the library's.
    var countingCPU = 0.0
    let port = URL(string: settings.base)?.port ?? 0
    let activeEnd = Date().addingTimeInterval(settings.partner.activeSeconds)
    while Date() < activeEnd {
        try await Task.sleep(nanoseconds: 500_000_000)
        if settings.mode == "tcp" {
            let before = ProcessControl.threadCPUMicroseconds()
            maxTCP = max(maxTCP, tcpConnections(toPort: port))
            if let before, let after = ProcessControl.threadCPUMicroseconds() { countingCPU += (after - before) / 1e6 }
        }
    }
    feeds.start(.none)
    var cpuEnd = processCPUSeconds()
    cpuEnd.system -= countingCPU
    details["tcp_counting_cpu_seconds"] = rounded(countingCPU)
    let activeCPU = (cpuEnd.user + cpuEnd.system - cpuStart.user - cpuStart.system) / Date().timeIntervalSince(wallStart) * 100
    let active = feeds.snapshot.active
    results["partner_event_p50_ms"] = rounded(active.quantile(0.5))
    results["partner_event_p99_ms"] = rounded(active.quantile(0.99))
    let rss = residentMB()
    threads = max(threads, processSwitchesAndThreads().threads)
    results["partner_rss_per_connection_kb"] = rounded((rss - baseline) * 1024 / Double(n))
    results["partner_threads"] = threads
    details["active_events"] = active.count
    details["active_cpu_percent"] = rounded(activeCPU)
    results["partner_active_cpu_percent"] = rounded(activeCPU)
    // CPU of the whole process over the events it handled: what one event costs, all stages together.
    let activeCPUSeconds = cpuEnd.user + cpuEnd.system - cpuStart.user - cpuStart.system
    results["partner_cpu_us_per_event"] = rounded(activeCPUSeconds * 1e6 / Double(max(1, active.count)))
    details["active_rss_mb"] = rounded(rss)
    details["generator"] = try admin.json("GET", "/_sandbox/events/generator")
    log(String(format: "active: %d events, p50 %.1f ms, p99 %.1f ms, %.1f %% CPU, %.1f MB (%.1f KB a connection), %d threads",
               active.count, active.quantile(0.5), active.quantile(0.99), activeCPU, rss,
               (rss - baseline) * 1024 / Double(n), threads))
    if settings.mode == "tcp" {
        results["partner_tcp_connections"] = maxTCP
        _ = try admin.json("DELETE", "/_sandbox/events/generator")
        log("through nginx over HTTP/2: at most \(maxTCP) TCP connections")
        details["tcp_connections_at_end"] = tcpConnections(toPort: port)
        results["details"] = details
        for watcher in watchers { watcher.stop() }
        try printJSONLine(results)
        return
    }

    // Failing feeds: the others must not notice.
    let (revoked, outage, expired, unauthorized) = (0, 1, 2, 3)
    try await failFeeds(admin: admin, client: clients[expired], restaurants: restaurants, grants: grants,
                        revoked: revoked, outage: outage, expired: expired, unauthorized: unauthorized)
    feeds.start(.faults, victims: [revoked, outage, expired, unauthorized])
    try await Task.sleep(nanoseconds: UInt64(settings.partner.faultSeconds * 1e9))
    feeds.start(.none)
    let others = feeds.snapshot.others
    results["partner_event_p99_ms_with_failing_feeds"] = rounded(others.quantile(0.99))
    details["with_failing_feeds_events"] = others.count
    details["with_failing_feeds_p50_ms"] = rounded(others.quantile(0.5))
    log(String(format: "with four failing feeds: the others' p99 %.1f ms over %d events", others.quantile(0.99), others.count))
    _ = try admin.json("DELETE", "/_sandbox/faults")
    _ = try admin.json("DELETE", "/_sandbox/events/generator")
    // The outage is over: that feed reads on from its cursor after its current wait (up to 60 s), polling until it
    // tries the stream again (the 503 carried no Retry-After: 5 minutes).
    try await Task.sleep(nanoseconds: 2_000_000_000)
    let recovery = Date()
    let owed = try await serverCounts(clients: clients, restaurants: restaurants, after: start.nextCursor, of: [outage])
    while feeds.snapshot.received[outage] < owed[outage] ?? 0 && Date().timeIntervalSince(recovery) < 120 {
        try await Task.sleep(nanoseconds: 500_000_000)
    }
    details["outage_caught_up_after_seconds"] = rounded(Date().timeIntervalSince(recovery))
    try await Task.sleep(nanoseconds: 3_000_000_000)  // the last events arrive

    // The revoked feed ended by itself and was reported once; nobody else was touched.
    let seen = feeds.snapshot
    results["partner_revoked_reports"] = seen.unpaired[revoked]
    results["partner_revoked_feed_ended"] = feeds.hasEnded(revoked)
    details["feeds_ended"] = (0..<n).filter { feeds.hasEnded($0) }.count
    let victims: Set<Int> = [revoked, outage, expired, unauthorized]
    let disturbed = (0..<n).filter { !victims.contains($0) && (seen.unpaired[$0] + seen.resets[$0] + seen.errors[$0]) > 0 }
    results["partner_others_disturbed"] = disturbed.count
    details["victims"] = [
        "revoked": ["unpaired": seen.unpaired[revoked], "errors": seen.errors[revoked], "last_error": seen.lastError[revoked] ?? ""],
        "outage": ["errors": seen.errors[outage], "last_error": seen.lastError[outage] ?? "", "streaming": watchers[outage].isStreaming],
        "expired_cursor": ["resets": seen.resets[expired], "errors": seen.errors[expired]],
        "expired_token": ["errors": seen.errors[unauthorized], "unpaired": seen.unpaired[unauthorized]],
    ] as [String: Any]
    if !disturbed.isEmpty {
        details["disturbed_sample"] = disturbed.prefix(5).map { "\($0): \(seen.lastError[$0] ?? "?")" }
    }

    // Gaps: every restaurant's events in the server's feed since the start, against what its feed delivered.
    let counted = try await serverCounts(clients: clients, restaurants: restaurants, after: start.nextCursor,
                                         of: (0..<n).filter { $0 != revoked && $0 != expired })
    var gaps = 0
    var duplicates = 0
    for (index, count) in counted {
        gaps += max(0, count - seen.received[index])
        duplicates += max(0, seen.received[index] - count)
    }
    results["partner_gaps"] = gaps
    results["partner_duplicates"] = duplicates
    details["events_checked"] = counted.values.reduce(0, +)
    log("gaps \(gaps), duplicates \(duplicates) over \(counted.values.reduce(0, +)) events of \(counted.count) feeds")
    results["details"] = details
    for watcher in watchers { watcher.stop() }
    for run in runs { await run.value }
    log("all feeds stopped")
    try printJSONLine(results)
}

/// Makes four feeds fail at once, each cut so that it must reconnect into its failure.
func failFeeds(
    admin: PlainHTTP, client: ProfirestApi, restaurants: [String], grants: [String],
    revoked: Int, outage: Int, expired: Int, unauthorized: Int
) async throws {
    // A 410 needs the end of the feed for its next_cursor, as the server's own carries.
    let end: EventPage = try await client.get(
        "/events", options: .init(query: ["restaurant_id": .string(restaurants[expired])]))
    let gone = try JSONSerialization.data(withJSONObject: [
        "type": "https://api.mujprofirest.cz/problems/cursor_expired", "title": "Cursor expired", "status": 410,
        "code": "cursor_expired", "detail": "Injected by the bench.", "next_cursor": end.nextCursor,
    ])
    _ = try admin.json("POST", "/_sandbox/faults", [
        "path": "/v2/events*", "restaurant_id": restaurants[expired], "count": 1, "action": "status", "status": 410,
        "problem": false, "body": String(decoding: gone, as: UTF8.self), "content_type": "application/problem+json",
    ])
    _ = try admin.json("POST", "/_sandbox/faults", [
        "path": "/v2/events*", "restaurant_id": restaurants[outage], "count": NSNull(), "action": "status", "status": 503,
    ])
    _ = try admin.json("POST", "/_sandbox/tokens/expire", ["device_id": grants[unauthorized]])
    _ = try admin.json("DELETE", "/_sandbox/connections/\(grants[revoked])")
    for index in [outage, expired, unauthorized] {
        _ = try admin.json("POST", "/_sandbox/stream/cut", ["connection": grants[index]])
    }
}

/// How many events of each restaurant of `indices` the server's feed holds after `cursor` (read through each
/// restaurant's own client, 16 at a time).
func serverCounts(clients: [ProfirestApi], restaurants: [String], after cursor: String, of indices: [Int])
    async throws -> [Int: Int]
{
    try await withThrowingTaskGroup(of: (Int, Int).self) { group in
        var counts: [Int: Int] = [:]
        var next = 0
        func add(_ group: inout ThrowingTaskGroup<(Int, Int), Error>) {
            guard next < indices.count else { return }
            let index = indices[next]
            next += 1
            group.addTask {
                var count = 0
                var position = cursor
                while true {
                    let page: EventPage = try await clients[index].get("/events", options: .init(query: [
                        "restaurant_id": .string(restaurants[index]), "cursor": .string(position), "limit": 100]))
                    count += page.data.count
                    position = page.nextCursor
                    if !page.hasMore { return (index, count) }
                }
            }
        }
        for _ in 0..<16 { add(&group) }
        while let (index, count) = try await group.next() {
            counts[index] = count
            add(&group)
        }
        return counts
    }
}

/// Waits until every watcher streams, at most `limit` seconds.
func waitStreaming(_ watchers: [EventWatcher], limit: TimeInterval) async throws {
    let start = Date()
    while watchers.contains(where: { !$0.isStreaming }) {
        guard Date().timeIntervalSince(start) < limit else {
            throw BenchFailure("only \(watchers.filter(\.isStreaming).count) of \(watchers.count) feeds streaming after \(Int(limit)) s")
        }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
}

func partnerKey(_ restaurant: String) -> String { "profirest-api:moje-aplikace:restaurant-\(restaurant)" }

/// A partner connection's state document (TokensAndStorage.md, "One document per connection") from the tokens of a bulk consent.
private func partnerStateDocument(_ row: [String: Any]) throws -> String {
    let expiresIn = row["expires_in"] as? Int ?? 1800
    let document: [String: Any] = [
        "version": 1, "access_token": row["access_token"] ?? "", "refresh_token": row["refresh_token"] ?? "",
        "token_type": "Bearer", "expires_at": ISO8601DateFormatter().string(from: Date().addingTimeInterval(Double(expiresIn))),
        "scopes": ((row["scope"] as? String) ?? "").split(separator: " ").map(String.init),
    ]
    return String(decoding: try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys]), as: UTF8.self)
}

/// Soft limit of open files up to the hard one: a thousand streams need more than the usual 1 024.
func raiseOpenFileLimit() {
    #if canImport(Glibc)
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = min(limit.rlim_max, 65_536)
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    #endif
}

/// This process's established TCP connections to `port` on loopback (its sockets in /proc/net/tcp and tcp6).
func tcpConnections(toPort port: Int) -> Int {
    let mine = Set(((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { fd in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")).flatMap { link in
            link.hasPrefix("socket:[") ? String(link.dropFirst(8).dropLast()) : nil
        }
    })
    let hexPort = String(format: ":%04X", port)
    var count = 0
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in procFile(table).split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[2].hasSuffix(hexPort), fields[3] == "01", mine.contains(String(fields[9])) else {
                continue
            }
            count += 1
        }
    }
    return count
}

/// One HTTP/1.1 exchange on a new loopback connection (`Connection: close`), for the admin API: plain sockets, so
/// that the child measures nothing but the library.
struct PlainHTTP {
    let host: String
    let port: UInt16

    init(base: String) {
        let url = URL(string: base)!
        host = url.host ?? "127.0.0.1"
        port = UInt16(url.port ?? 80)
    }

    /// The JSON object of the answer; throws on a status ≥ 300.
    func json(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> [String: Any] {
        let payload = try body.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        head += "Content-Length: \(payload.count)\r\n"
        if body != nil { head += "Content-Type: application/json\r\n" }
        let answer = try exchange(Data((head + "\r\n").utf8) + payload)
        guard let split = answer.range(of: Data("\r\n\r\n".utf8)) else { throw BenchFailure("admin \(path): no answer") }
        let statusLine = String(decoding: answer[..<split.lowerBound], as: UTF8.self).split(separator: " ")
        let status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
        let content = answer[split.upperBound...]
        guard (200..<300).contains(status) else {
            throw BenchFailure("\(method) \(path) answered \(status): \(String(decoding: content, as: UTF8.self))")
        }
        return content.isEmpty ? [:] : ((try JSONSerialization.jsonObject(with: content)) as? [String: Any] ?? [:])
    }

    private func exchange(_ request: Data) throws -> Data {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchFailure("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr(host == "localhost" ? "127.0.0.1" : host)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw BenchFailure("connect to the admin API: \(errno)") }
        try request.withUnsafeBytes { bytes in
            var sent = 0
            while sent < bytes.count {
                let n = write(fd, bytes.baseAddress! + sent, bytes.count - sent)
                guard n > 0 else { throw BenchFailure("write to the admin API: \(errno)") }
                sent += n
            }
        }
        var answer = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            answer.append(contentsOf: buffer[0..<n])
        }
        return answer
        #else
        throw BenchFailure("the partner part's admin client needs POSIX sockets")
        #endif
    }
}
