// The event feed's figures, through the public API (`api.eventWatcher(…).run()` and its `onEvents`) against
// benchmarks/bench_server.py on loopback, with the library's default transport:
//
//   sse_latency_p50_ms / sse_latency_p99_ms   from the server writing an event to `onEvents` receiving it, keyed by
//                                             the paced rate: "10" and "1000" events/s, and "max" — the highest rate
//                                             of the ladder the watcher sustained (sse_max_sustained_events_per_second)
//   sse_events_per_second                     the whole watcher (stream, parser, decoding, cursor store) with a
//                                             trivial `onEvents`, the server writing as fast as the socket takes it
//                                             (1 000 000 events); sse_flood_rss_growth_mb is the memory that run
//                                             grows by: CurlTransport pauses a stream whose reader is behind, so the
//                                             backlog should stay in the server's socket (target <= 10 MB);
//                                             …_urlsession_transport: the same through URLSessionTransport, which
//                                             cannot pause and buffers it all
//   sse_rss_growth_mb                         resident memory over 1 000 000 events at the highest sustained rate
//                                             (sse_rss_rate_events_per_second), where nothing piles up: the highest
//                                             sample (every 50 000 events) minus the memory before the run
//   sse_parser_mb_per_second                  the parser alone (ServerSentEvents.swift, the library's own file
//                                             compiled into the bench through a symlink: it is internal), on the same
//                                             frames in 16 KB chunks
//   polling_latency_p50_ms / _p99_ms          the stream answering 503 (the watcher polls every `interval`, 1 s
//                                             here): from the event entering the server's log to `onEvents`;
//                                             bounded by the interval plus a request
//
// Latencies use CLOCK_MONOTONIC on both sides (the server stamps `data.sent_ns` just before its write).
import Foundation
import ProfirestAPI
import ProfirestTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct EventStreamSettings {
    var slowSeconds = 20.0  // at 10 events/s: 200 events
    var paceSeconds = 8.0  // at 1 000 events/s and each rung of the ladder
    var ladder = [2_000, 5_000, 10_000, 20_000, 40_000, 60_000]
    var floodEvents = 1_000_000
    var pollEvents = 100
    var pollInterval = 1.0
    /// A rung is sustained when every event arrived and the p99 latency stayed under this (a watcher that falls
    /// behind sees its latency grow with the length of the run).
    var sustainedP99 = 100.0

    init(_ arguments: [String]) {
        var i = 1
        while i + 1 < arguments.count {
            let value = arguments[i + 1]
            switch arguments[i] {
            case "--sse-flood-events": floodEvents = max(100_000, Int(value) ?? floodEvents)
            case "--sse-pace-seconds": paceSeconds = max(1, Double(value) ?? paceSeconds)
            case "--sse-slow-seconds": slowSeconds = max(2, Double(value) ?? slowSeconds)
            default: break
            }
            i += 2
        }
    }
}

/// CLOCK_MONOTONIC, the bench server's clock; 0 where there is none (Windows: no latencies are measured there).
func monotonicNanoseconds() -> UInt64 {
    ProcessControl.monotonicNanoseconds() ?? 0
}

/// The text of a /proc file (their size reads as 0, so Foundation's whole-file readers return nothing).
func procFile(_ path: String) -> String {
    guard let handle = FileHandle(forReadingAtPath: path) else { return "" }
    defer { try? handle.close() }
    return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
}

/// Resident memory of this process, MB (VmRSS; `peak` reads VmHWM).
func residentMB(peak: Bool = false) -> Double {
    let key = peak ? "VmHWM:" : "VmRSS:"
    for line in procFile("/proc/self/status").split(separator: "\n") where line.hasPrefix(key) {
        let kilobytes = line.dropFirst(key.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Double($0) } ?? .nan
        return kilobytes / 1024
    }
    return .nan
}

/// Starts a new peak for `residentMB(peak: true)` (Linux: "5" into clear_refs resets VmHWM).
func resetPeakResident() {
    guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return }
    handle.write(Data("5".utf8))
    try? handle.close()
}

/// bench_server.py as a child process, and its admin calls.
final class BenchServer: BenchClient, @unchecked Sendable {
    let server: ChildServer

    init(script: String = "benchmarks/bench_server.py") throws {
        server = try ChildServer(executable: "/usr/bin/env", arguments: ["python3", script])
        guard let port = server.announcement["port"] as? Int else {
            server.stop()
            throw BenchFailure("the bench server did not start: \(server.announcement)")
        }
        super.init(base: "http://127.0.0.1:\(port)")
    }

    func stop() { server.stop() }
}

/// The admin calls of a running bench_server.py.
class BenchClient: @unchecked Sendable {
    // @unchecked: both properties are set once.
    let base: String
    private let session = URLSession(configuration: .ephemeral)

    init(base: String) { self.base = base }

    @discardableResult
    func admin(_ path: String, _ body: [String: Any]? = nil) async throws -> [String: Any] {
        var request = URLRequest(url: URL(string: base + path)!)
        if let body {
            request.httpMethod = "POST"
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
        }
        let (data, _) = try await session.data(for: request)
        return (try JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }
}

/// What `onEvents` saw: latencies (when asked), the count, first and last arrival, memory samples.
final class Arrivals: @unchecked Sendable {
    // @unchecked: every field is touched only under `lock`.
    private let lock = NSLock()
    private let keepLatencies: Bool
    private let rssEvery: Int?
    private var latencies: [Double] = []
    private var count = 0
    private var first: UInt64 = 0
    private var last: UInt64 = 0
    private var firstSent: Double = .nan
    private var lastSent: Double = .nan
    private var rss: [(events: Int, mb: Double)] = []

    init(expected: Int, keepLatencies: Bool, rssEvery: Int? = nil) {
        self.keepLatencies = keepLatencies
        self.rssEvery = rssEvery
        if keepLatencies { latencies.reserveCapacity(expected) }
    }

    func take(_ events: [Event]) {
        let now = monotonicNanoseconds()
        lock.lock()
        defer { lock.unlock() }
        if count == 0 { first = now }
        last = now
        for event in events {
            count += 1
            if let sent = event.data["sent_ns"]?.doubleValue {
                if firstSent.isNaN { firstSent = sent }
                lastSent = sent
                if keepLatencies, now > 0 { latencies.append((Double(now) - sent) / 1e6) }
            }
            if let every = rssEvery, count % every == 0 { rss.append((count, residentMB())) }
        }
    }

    var received: Int { lock.lock(); defer { lock.unlock() }; return count }

    func snapshot() -> (latencies: [Double], count: Int, seconds: Double, sentSeconds: Double, rss: [(events: Int, mb: Double)]) {
        lock.lock()
        defer { lock.unlock() }
        return (latencies, count, Double(last - first) / 1e9, (lastSent - firstSent) / 1e9, rss)
    }
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let index = min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))
    return sorted[index]
}

/// Runs a watcher of a new client until `count` events arrived or `limit` seconds passed, with the stream as
/// `stream` tells the server (nil: leave it), `started` called once the watcher runs.
func watch(
    _ server: BenchClient, stream: [String: Any]?, count: Int, limit: TimeInterval, arrivals: Arrivals,
    interval: TimeInterval = 5, transport: (any StreamingHTTPTransport)? = nil, started: (() async throws -> Void)? = nil
) async throws {
    if let stream { try await server.admin("/_bench/stream", stream) }
    // Without `transport`, the client's default transport (on Linux the shared CurlTransport), as an app has it.
    let api = ProfirestApi(options: .init(baseURL: server.base, accessToken: "bench-access-token", transport: transport))
    let watcher = api.eventWatcher(.init(restaurantID: "11", onEvents: { arrivals.take($0) }, interval: interval))
    let run = Task { await watcher.run() }
    if let started { try await started() }
    let end = Date().addingTimeInterval(limit)
    while arrivals.received < count && Date() < end { try await Task.sleep(nanoseconds: 5_000_000) }
    watcher.stop()
    await run.value
}

/// One paced run: p50/p99 latency, whether it was sustained, and the rate the server really kept.
func pacedRun(_ server: BenchServer, rate: Int, seconds: Double, settings: EventStreamSettings) async throws
    -> (p50: Double, p99: Double, sustained: Bool, offered: Double)
{
    let count = max(20, Int(Double(rate) * seconds))
    let arrivals = Arrivals(expected: count, keepLatencies: true)
    try await watch(server, stream: ["rate": rate, "count": count], count: count, limit: seconds + 10, arrivals: arrivals)
    let seen = arrivals.snapshot()
    // Drop the first 1 %: the connection's start (the watcher's first request, the stream's head) is not the pace.
    let steady = Array(seen.latencies.dropFirst(seen.latencies.count / 100))
    let p50 = percentile(steady, 0.5)
    let p99 = percentile(steady, 0.99)
    let offered = seen.sentSeconds > 0 ? Double(seen.count - 1) / seen.sentSeconds : Double(rate)
    let sustained = seen.count >= count && p99 <= settings.sustainedP99
    FileHandle.standardError.write(Data(String(
        format: "sse: %6d events/s asked (%.0f written), %d of %d events, p50 %.2f ms, p99 %.2f ms%@\n",
        rate, offered, seen.count, count, p50, p99, sustained ? "" : " — not sustained").utf8))
    return (p50, p99, sustained, offered)
}

func eventStreamResults(_ arguments: [String]) async throws -> [String: Any] {
    let settings = EventStreamSettings(arguments)
    let server = try BenchServer()
    defer { server.stop() }
    var results: [String: Any] = [:]
    var p50: [String: Double] = [:]
    var p99: [String: Double] = [:]

    // Warm up: one short run (connections, caches, the decoder's metadata).
    _ = try await pacedRun(server, rate: 1_000, seconds: 1, settings: settings)

    let slow = try await pacedRun(server, rate: 10, seconds: settings.slowSeconds, settings: settings)
    (p50["10"], p99["10"]) = (rounded(slow.p50), rounded(slow.p99))
    let thousand = try await pacedRun(server, rate: 1_000, seconds: settings.paceSeconds, settings: settings)
    (p50["1000"], p99["1000"]) = (rounded(thousand.p50), rounded(thousand.p99))

    // The whole watcher flat out: its rate (and how much memory the backlog in front of it takes) — in a
    // fresh process, whose heap holds nothing freed by the runs before.
    let flood = try runChild([
        "--child", "sse-run", "--base", server.base, "--rate", "0", "--sse-flood-events", "\(settings.floodEvents)",
    ])
    let perSecond = flood["events_per_second"] as? Double ?? .nan
    results["sse_events_per_second"] = flood["events_per_second"]
    results["sse_flood_rss_growth_mb"] = flood["rss_growth_mb"]
    results["sse_flood_rss_samples_mb"] = flood["rss_samples_mb"]
    // The same flood through URLSessionTransport (the transport where libcurl is missing, and the Linux default
    // before CurlTransport), which cannot pause a transfer: what the bounded stream buffer saves.
    let floodURLSession = try runChild([
        "--child", "sse-run", "--base", server.base, "--rate", "0", "--sse-flood-events", "\(settings.floodEvents)",
        "--transport", "urlsession",
    ])
    results["sse_events_per_second_urlsession_transport"] = floodURLSession["events_per_second"]
    results["sse_flood_rss_growth_mb_urlsession_transport"] = floodURLSession["rss_growth_mb"]

    // The ladder: the highest paced rate (up to what the flood reached) the watcher keeps up with. A rung that
    // fails is tried once more (another user of the machine can stall one run), then the climb stops.
    var best: (rate: Int, p50: Double, p99: Double, offered: Double)?
    ladder: for rate in settings.ladder where Double(rate) <= perSecond {
        for attempt in 0..<2 {
            let run = try await pacedRun(server, rate: rate, seconds: settings.paceSeconds, settings: settings)
            if run.sustained {
                best = (rate, run.p50, run.p99, run.offered)
                continue ladder
            }
            if attempt == 1 { break ladder }
        }
    }
    if let best {
        (p50["max"], p99["max"]) = (rounded(best.p50), rounded(best.p99))
        results["sse_max_sustained_events_per_second"] = best.rate
    }

    // Memory over 1 000 000 events at the highest sustained rate, where nothing piles up in front of the watcher:
    // what stays behind per event, in a fresh process.
    let steadyRate = best?.rate ?? 2_000
    let steady = try runChild([
        "--child", "sse-run", "--base", server.base, "--rate", "\(steadyRate)", "--sse-flood-events", "\(settings.floodEvents)",
    ])
    results["sse_rss_growth_mb"] = steady["rss_growth_mb"]
    results["sse_rss_samples_mb"] = steady["rss_samples_mb"]
    results["sse_rss_rate_events_per_second"] = steadyRate

    results["sse_latency_p50_ms"] = p50
    results["sse_latency_p99_ms"] = p99

    results["sse_parser_mb_per_second"] = rounded(parserMegabytesPerSecond())

    // The stream down: the watcher polls every `pollInterval`; events enter the log at 10 a second.
    let polled = Arrivals(expected: settings.pollEvents, keepLatencies: true)
    try await watch(
        server, stream: ["down": true], count: settings.pollEvents, limit: Double(settings.pollEvents) / 10 + 15,
        arrivals: polled, interval: settings.pollInterval
    ) {
        // Once the watcher has found the end of the (empty) log and is polling.
        let end = Date().addingTimeInterval(10)
        while (try await server.admin("/_bench/stats"))["polls"] as? Int ?? 0 < 2 && Date() < end {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        try await server.admin("/_bench/log", ["rate": 10, "count": settings.pollEvents])
    }
    let polledSeen = polled.snapshot()
    results["polling_latency_p50_ms"] = rounded(percentile(polledSeen.latencies, 0.5))
    results["polling_latency_p99_ms"] = rounded(percentile(polledSeen.latencies, 0.99))
    results["polling_interval_seconds"] = settings.pollInterval
    FileHandle.standardError.write(Data(String(
        format: "sse: polling every %.0f s, %d events, p50 %.1f ms, p99 %.1f ms\n", settings.pollInterval,
        polledSeen.count, percentile(polledSeen.latencies, 0.5), percentile(polledSeen.latencies, 0.99)).utf8))

    results["sse_bench_setup"] = "benchmarks/bench_server.py on loopback, api.eventWatcher(...).run() with the default "
        + "transport (CurlTransport on Linux) and MemoryTokenStorage, ~230-byte order.created events; latency from the server's write "
        + "to onEvents (CLOCK_MONOTONIC) at 10/s for \(Int(settings.slowSeconds)) s, 1000/s and each ladder rate "
        + "\(settings.ladder) for \(Int(settings.paceSeconds)) s (first 1 % dropped; sustained = all arrived and p99 <= "
        + "\(Int(settings.sustainedP99)) ms, a failed rung tried twice); \(settings.floodEvents) events flat out for the "
        + "rate and the same number at the highest sustained rate for RSS growth (each in a fresh process, after 2000 "
        + "events of warm-up; highest sample every 50000 events minus the RSS before); the parser alone on the same "
        + "frames in 16 KB chunks; polling with the stream answering 503, every \(settings.pollInterval) s, 10 events/s"
    return results
}

/// MB/s of `ServerSentEvents.feed` over 16 MB of the bench's frames in 16 KB chunks; the median of 5 passes.
func parserMegabytesPerSecond() -> Double {
    var text = ""
    var n = 0
    let now = monotonicNanoseconds()
    while text.utf8.count < 16 << 20 {
        n += 1
        text += "id: \(n)\nevent: order.created\ndata: {\"id\":\"evt_\(String(format: "%09d", n))\",\"type\":\"order.created\","
            + "\"restaurant_id\":\"11\",\"occurred_at\":\"2026-11-30T15:31:34.250Z\",\"data\":{\"order_id\":\"ord_\(n)\","
            + "\"status\":\"open\",\"sent_ns\":\(now)}}\n\n"
    }
    let bytes = Data(text.utf8)
    let chunks = stride(from: 0, to: bytes.count, by: 16_384).map { bytes[$0..<min($0 + 16_384, bytes.count)] }
    var rates: [Double] = []
    for _ in 0..<5 {
        var parser = ServerSentEvents()
        var events = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for chunk in chunks { events += (try? parser.feed(chunk))?.count ?? 0 }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard events == n else { FileHandle.standardError.write(Data("sse parser: \(events) of \(n) events\n".utf8)); return .nan }
        rates.append(Double(bytes.count) / 1e6 / seconds)
    }
    FileHandle.standardError.write(Data(String(format: "sse: parser %.1f MB/s (%d events per pass)\n", median(rates), n).utf8))
    return median(rates)
}

/// The child process of `eventStreamResults`: `--sse-flood-events` events at `--rate` a second (0: as fast as the
/// watcher takes them) from a server another process started, after 2 000 events to warm up; prints the arrival
/// rate, the resident memory every 50 000 events and its growth (highest sample minus the memory before the run) as
/// one JSON line.
func sseRunChild(base: String, _ arguments: [String]) async throws {
    let settings = EventStreamSettings(arguments)
    let rate = arguments.firstIndex(of: "--rate").flatMap { Int(arguments[$0 + 1]) } ?? 0
    // `--transport urlsession`: one URLSessionTransport for both runs; otherwise the default transport.
    let transport: (any StreamingHTTPTransport)? =
        arguments.firstIndex(of: "--transport").map { arguments[$0 + 1] } == "urlsession" ? URLSessionTransport() : nil
    let server = BenchClient(base: base)
    let warm = Arrivals(expected: 2_000, keepLatencies: false)
    try await watch(
        server, stream: ["rate": 10_000, "count": 2_000], count: 2_000, limit: 30, arrivals: warm, transport: transport)
    let count = settings.floodEvents
    let before = residentMB()
    let arrivals = Arrivals(expected: count, keepLatencies: false, rssEvery: 50_000)
    try await watch(
        server, stream: ["rate": rate, "count": count], count: count, limit: 900, arrivals: arrivals, transport: transport)
    let seen = arrivals.snapshot()
    let perSecond = seen.seconds > 0 ? Double(seen.count - 1) / seen.seconds : .nan
    let growth = (seen.rss.map(\.mb).max() ?? before) - before
    FileHandle.standardError.write(Data(String(
        format: "sse: %@ %d events in %.1f s = %.0f events/s; RSS %.1f MB before, growth %.2f MB\n",
        rate == 0 ? "flat out" : "at \(rate)/s", seen.count, seen.seconds, perSecond, before, growth).utf8))
    guard seen.count >= count else { throw BenchFailure("sse: only \(seen.count) of \(count) events arrived") }
    try printJSONLine([
        "events_per_second": rounded(perSecond), "rss_growth_mb": rounded(growth), "rss_before_mb": rounded(before),
        "rss_samples_mb": seen.rss.map { [$0.events, rounded($0.mb)] },
    ])
}
