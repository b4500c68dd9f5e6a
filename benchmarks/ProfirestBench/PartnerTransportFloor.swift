// The floor under the partner figures: the same thousand restaurants and the same generator, but each stream read
// straight from the library's default transport (`CurlTransport().stream`, the body read by a task that only counts
// events) — libcurl, the kernel, the engine thread and the hand-over of each chunk to a task, and none of the
// library's own work on an event (parsing, decoding, the app's callback, the cursor store):
//
//   partner_active_cpu_percent_transport      CPU time ÷ wall time × 100 over --partner-active-seconds, plain HTTP
//   partner_active_cpu_percent_transport_h2   the same through nginx over HTTP/2 and TLS
//   partner_cpu_us_per_event_transport(_h2)   that CPU over the events the streams carried
//
// What the library adds to an event is partner_cpu_us_per_event − partner_cpu_us_per_event_transport.
import Foundation
import ProfirestAPI

/// What the counting readers of the floor saw.
final class FloorCounts: @unchecked Sendable {
    // @unchecked: every field is touched only under `lock`.
    private let lock = NSLock()
    private var greeted = 0
    private var events = 0
    private var ended = 0

    func greet() { lock.lock(); greeted += 1; lock.unlock() }
    func add(_ count: Int) { lock.lock(); events += count; lock.unlock() }
    func end() { lock.lock(); ended += 1; lock.unlock() }
    var state: (greeted: Int, events: Int, ended: Int) { lock.lock(); defer { lock.unlock() }; return (greeted, events, ended) }
}

/// The `--mode transport` child: opens every restaurant's stream through the default transport, starts the generator
/// and measures the active phase as `partnerChild` does; prints one JSON line.
func partnerTransportFloor(
    base: String, admin: PlainHTTP, rows: [[String: Any]], restaurants: [String], trusted: TrustedCertificates?,
    activeSeconds: Double, log: (String) -> Void
) async throws {
    #if os(Linux)
    let transport = try CurlTransport(trustedCertificates: trusted)
    #else
    let transport = URLSessionTransport()
    #endif
    let counts = FloorCounts()
    var readers: [Task<Void, Never>] = []
    let root = base.hasSuffix("/") ? String(base.dropLast()) : base
    for (index, row) in rows.enumerated() {
        guard let token = row["access_token"] as? String,
            let url = URL(string: root + "/v2/events/stream?restaurant_id=" + restaurants[index])
        else { throw BenchFailure("floor: a bulk consent without its access token") }
        let request = HTTPRequest(
            method: "GET", url: url,
            headers: ["Authorization": "Bearer " + token, "Accept": "text/event-stream", "Cache-Control": "no-store"],
            timeout: 60)
        let response = try await transport.stream(request)
        guard response.status == 200 else { throw BenchFailure("floor: the stream answered \(response.status)") }
        readers.append(Task {
            // An event ends with an empty line: count the blank lines, across chunk boundaries too.
            var last: UInt8 = 0
            var greeted = false
            do {
                for try await chunk in response.body {
                    if !greeted { greeted = true; counts.greet() }
                    var events = 0
                    for byte in chunk {
                        if byte == 10 && last == 10 { events += 1 }
                        last = byte
                    }
                    if events > 0 { counts.add(events) }
                }
            } catch {}
            counts.end()
        })
    }
    let deadline = Date().addingTimeInterval(60)
    while counts.state.greeted < rows.count && Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
    guard counts.state.greeted == rows.count else { throw BenchFailure("floor: \(counts.state.greeted) of \(rows.count) streams opened") }
    log("floor: \(rows.count) streams through the default transport")

    let generator = try admin.json("POST", "/_sandbox/events/generator", ["rate": 1, "client_id": "moje-aplikace"])
    guard generator["running"] as? Bool == true else { throw BenchFailure("the event generator: \(generator)") }
    try await Task.sleep(nanoseconds: 5_000_000_000)
    let eventsStart = counts.state.events
    let cpuStart = processCPUSeconds()
    let wallStart = Date()
    try await Task.sleep(nanoseconds: UInt64(activeSeconds * 1e9))
    let cpuEnd = processCPUSeconds()
    let wall = Date().timeIntervalSince(wallStart)
    let events = counts.state.events - eventsStart
    _ = try admin.json("DELETE", "/_sandbox/events/generator")
    guard counts.state.ended == 0 else { throw BenchFailure("floor: \(counts.state.ended) streams ended while measured") }
    let cpu = cpuEnd.user + cpuEnd.system - cpuStart.user - cpuStart.system
    log(String(format: "floor: %d events, %.1f %% CPU, %.0f µs an event", events, cpu / wall * 100, cpu * 1e6 / Double(max(1, events))))
    for reader in readers { reader.cancel() }
    try printJSONLine([
        "partner_active_cpu_percent_transport": rounded(cpu / wall * 100),
        "partner_cpu_us_per_event_transport": rounded(cpu * 1e6 / Double(max(1, events))),
        "events": events,
    ])
}
