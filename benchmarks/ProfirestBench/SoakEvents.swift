// make soak, the event feed: one EventWatcher (restaurant 11, all types) reads while the sandbox produces `events`
// synthetic events (POST /_sandbox/events) in chunks, and between the chunks the stream is cut, the stream service
// goes down (503 → polling), three drops in a row send the watcher to a minute of polling, and every cursor expires
// (410 → onReset). Counted by event id in `onEvents`. Every key a count:
//
//   events_produced                  events the sandbox appended to the feed (all visible to the watcher)
//   events_gaps                      produced but never handed to onEvents (must be 0)
//   events_duplicates_after_ack      handed to onEvents again after a call that included them had returned — the
//                                    library stores the cursor then, so this must be 0
//   events_redelivered_before_ack    handed again before that (allowed: at least once); onEvents never throws here
//   events_unexpected                delivered but not produced by this phase (other writers; should be 0)
//   events_skipped_by_reset          produced but not yet delivered when a cursor expired: the protocol skips them
//                                    (the cursors expire only once the watcher has caught up, so 0)
//   events_stream_cuts               cuts that closed the watcher's open stream (`cuts` planned ones, plus those of
//                                    the three-drop phases and of the cursor expiries)
//   events_outages                   stream service down (503 + Retry-After) while a chunk was produced
//   events_polling_phases            times three connections in a row that died before their first byte sent the
//                                    watcher to polling, seen by its polls
//   events_cursor_resets             onReset calls (one per expiry)
//   events_poll_requests, events_stream_connections   what the sandbox served (GET /v2/events, SSE connections)
//   events_watcher_errors            onError calls (errors the watcher waited out)
//
// Time runs `EventSoakClock.speedup` times faster for the watcher, through both its `sleep` and its `clock`: the
// feed's schedule compares `clock` readings (when the stream is due again after a minute of polling or a
// Retry-After, the idle limit), so a compressed `sleep` alone would leave those waits at real length.
import Foundation
import ProfirestAPI

/// How the phase is sized: `events` in chunks, the faults spread evenly over them.
struct EventSoakPlan {
    let events: Int
    let cuts: Int
    let outages: Int

    /// 500 events a chunk in the full soak; smaller in a short one, so that it still has ~30 chunks to put faults between.
    var chunkSize: Int { min(500, max(1, events / 30)) }
    var chunks: Int { (events + chunkSize - 1) / chunkSize }
    func size(ofChunk index: Int) -> Int { min(chunkSize, events - index * chunkSize) }

    /// Of `total` things spread evenly over the chunks, how many fall on chunk `index`.
    func share(_ total: Int, at index: Int) -> Int { total * (index + 1) / chunks - total * index / chunks }

    /// `count` chunks spread evenly, each `offset` (0..<1) into its stretch, so different faults land apart.
    func slots(_ count: Int, offset: Double) -> Set<Int> {
        Set((0..<count).map { min(chunks - 1, Int((Double($0) + offset) * Double(chunks) / Double(count))) })
    }

    /// Three drops in a row and cursor expiries are slower (each waits for the watcher); a few are enough.
    var dropPhases: Set<Int> { slots(max(1, outages / 5), offset: 0.2) }
    var outageChunks: Set<Int> { slots(outages, offset: 0.5).subtracting(dropPhases) }
    var expiries: Set<Int> { slots(max(1, outages / 5), offset: 0.85) }
}

/// The watcher's time: `speedup` times faster than real time, from the moment it was made.
struct EventSoakClock: Sendable {
    static let speedup = 50.0
    let origin = Date()

    func now() -> Date { origin.addingTimeInterval(Date().timeIntervalSince(origin) * Self.speedup) }

    static func sleep(_ seconds: TimeInterval) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, seconds) / speedup * 1e9))
    }

    /// Real seconds for `seconds` of the watcher's time.
    static func real(_ seconds: TimeInterval) -> TimeInterval { seconds / speedup }
}

/// What the watcher handed to `onEvents`, by event id, against what the sandbox produced.
final class EventLedger: @unchecked Sendable {
    // @unchecked: every field is only touched under `lock`.
    private let lock = NSLock()
    private var produced: Set<String> = []
    private var deliveries: [String: Int] = [:]
    private var acknowledged: Set<String> = []
    private var producedAndDelivered = 0
    private var afterAck = 0
    private var beforeAck = 0
    private var resetCount = 0
    private var errorCount = 0

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// The ids a produce call returned. The stream may have delivered some of them before the call returned.
    func expect(_ ids: [String]) {
        locked {
            for id in ids {
                guard produced.insert(id).inserted else { continue }
                if deliveries[id] != nil { producedAndDelivered += 1 }
            }
        }
    }

    /// At the start of `onEvents`: a repeat of an acknowledged event is the failure this phase looks for.
    func received(_ events: [Event]) {
        locked {
            for event in events {
                if acknowledged.contains(event.id) {
                    afterAck += 1
                } else if deliveries[event.id] != nil {
                    beforeAck += 1
                }
                deliveries[event.id, default: 0] += 1
                if deliveries[event.id] == 1 && produced.contains(event.id) { producedAndDelivered += 1 }
            }
        }
    }

    /// At the end of `onEvents`, as it returns normally: from here on the library has them acknowledged.
    func returned(_ events: [Event]) { locked { acknowledged.formUnion(events.map(\.id)) } }

    func reset() { locked { resetCount += 1 } }
    func error() { locked { errorCount += 1 } }

    /// Produced events not delivered yet.
    var missing: Int { locked { produced.count - producedAndDelivered } }
    var resets: Int { locked { resetCount } }

    func counts() -> [String: Any] {
        locked {
            [
                "events_produced": produced.count,
                "events_gaps": produced.count - producedAndDelivered,
                "events_duplicates_after_ack": afterAck,
                "events_redelivered_before_ack": beforeAck,
                "events_unexpected": deliveries.keys.filter { !produced.contains($0) }.count,
                "events_cursor_resets": resetCount,
                "events_watcher_errors": errorCount,
            ]
        }
    }
}

/// The soak's side of the sandbox and the watcher: produces, injects faults, waits for the watcher. Used by one
/// task only, in order.
final class EventSoakDriver {
    let sandbox: Sandbox
    let watcher: EventWatcher
    let ledger: EventLedger
    private(set) var cuts = 0
    private(set) var outages = 0
    private(set) var pollingPhases = 0
    private(set) var skippedByReset = 0

    init(sandbox: Sandbox, watcher: EventWatcher, ledger: EventLedger) {
        self.sandbox = sandbox
        self.watcher = watcher
        self.ledger = ledger
    }

    func produce(_ count: Int) async throws {
        let answer = try await sandbox.admin("POST", "events", ["count": count, "type": "catalog.updated", "restaurant_id": "11"])
        // Restaurant 11, any type: all of them are the watcher's to see, so each one missing is a gap.
        guard let ids = answer["ids"] as? [String], ids.count == count, answer["restaurant_id"] as? String == "11" else {
            throw BenchFailure("POST /_sandbox/events: \(answer)")
        }
        ledger.expect(ids)
    }

    /// Polls `condition` every 5 ms for at most `seconds` of real time; whether it became true.
    func wait(_ seconds: TimeInterval, until condition: () async throws -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try await condition() { return true }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        return try await condition()
    }

    func caughtUp(within seconds: TimeInterval) async throws -> Bool {
        try await wait(seconds) { ledger.missing == 0 }
    }

    func polls() async throws -> Int {
        ((try await sandbox.admin("GET", "stats"))["requests"] as? [String: Any])?["GET /v2/events"] as? Int ?? 0
    }

    /// Streams the sandbox holds open. `watcher.isStreaming` lags: it stays true until the watcher has noticed a cut.
    func openStreams() async throws -> Int {
        (try await sandbox.admin("POST", "stream", [:]))["open"] as? Int ?? 0
    }

    /// Cuts the watcher's stream once it is connected (bounded: it may be polling for a while); whether a stream
    /// was open to cut.
    func cut() async throws -> Bool {
        guard try await wait(5, until: { try await openStreams() > 0 }) else { return false }
        let closed = (try await sandbox.admin("POST", "stream/cut"))["cut"] as? Int ?? 0
        if closed > 0 { cuts += 1 }
        return closed > 0
    }

    /// A chunk produced while the stream service answers 503: the watcher must read it by polling, then return to
    /// the stream after the Retry-After.
    func outage(_ count: Int) async throws {
        try await sandbox.admin("POST", "stream", ["down": true, "retry_after": 5])
        outages += 1
        try await produce(count)
        _ = try await caughtUp(within: 30)
        try await sandbox.admin("POST", "stream", ["down": false])
    }

    /// Makes the next three connections die before their first byte (a fault that drops them), then cuts the open
    /// stream: the watcher reconnects at once (the cut stream was healthy), meets the three dead connections in a row
    /// (after 2 s and 4 s) and is seen polling; then produces a chunk for the polls. (Cutting a stream is no longer a
    /// drop: the sandbox's first bytes come at once, so every connection it cuts was healthy.)
    func threeDrops(then count: Int) async throws {
        let before = try await polls()
        try await sandbox.admin("POST", "faults", ["method": "GET", "path": "/v2/events/stream", "count": 3, "action": "drop_before"])
        _ = try await cut()
        try await produce(count)
        if try await wait(EventSoakClock.real(60), until: { try await polls() > before && !watcher.isStreaming }) {
            pollingPhases += 1
        }
        _ = try await caughtUp(within: 30)
    }

    /// Expires every cursor once the watcher has caught up, so that the reset skips nothing, and makes the watcher
    /// use its (now expired) cursor at once by cutting its stream; waits for `onReset`.
    func expireCursors() async throws {
        guard try await caughtUp(within: 60) else {
            throw BenchFailure("the watcher did not catch up within 60 s (\(ledger.missing) events missing)")
        }
        let resets = ledger.resets
        skippedByReset += ledger.missing
        try await sandbox.admin("POST", "cursors/expire")
        _ = try await cut()
        guard try await wait(30, until: { ledger.resets > resets }) else {
            throw BenchFailure("no onReset within 30 s after the cursors expired")
        }
    }
}

func soakEvents(_ sandbox: Sandbox, events: Int, cuts: Int, outages: Int, storage: String) async throws -> [String: Any] {
    let plan = EventSoakPlan(events: events, cuts: cuts, outages: outages)
    let restore = try await eventSoakSettings(sandbox)
    try await sandbox.pairDevice(clientID: "profirest-kds", storage: FileTokenStorage(path: storage))
    let statsBefore = try await sandbox.admin("GET", "stats")
    let ledger = EventLedger()
    let watcher = eventSoakWatcher(sandbox, storage: storage, ledger: ledger)
    let reading = Task { await watcher.run() }
    let driver = EventSoakDriver(sandbox: sandbox, watcher: watcher, ledger: ledger)
    var failure: (any Error)?
    do {
        try await runEventPlan(plan, driver: driver)
        // Bounded: what has not arrived by then counts as a gap.
        _ = try await driver.caughtUp(within: 60)
    } catch {
        failure = error
    }
    watcher.stop()
    await reading.value
    if let failure { throw failure }
    try await restore()
    let statsAfter = try await sandbox.admin("GET", "stats")
    var results = ledger.counts()
    results["events_stream_cuts"] = driver.cuts
    results["events_outages"] = driver.outages
    results["events_polling_phases"] = driver.pollingPhases
    results["events_skipped_by_reset"] = driver.skippedByReset
    results["events_poll_requests"] = requestCount("GET /v2/events", statsBefore, statsAfter)
    results["events_stream_connections"] = (statsAfter["sse_connections"] as? Int ?? 0) - (statsBefore["sse_connections"] as? Int ?? 0)
    return results
}

/// Puts the sandbox's keep-alive on the watcher's time scale (15 s there; at real length every idle stream would
/// look dead to the watcher); returns what puts it and the stream's Retry-After, which outages change, back.
func eventSoakSettings(_ sandbox: Sandbox) async throws -> @Sendable () async throws -> Void {
    let heartbeat = (try await sandbox.admin("GET", "config"))["heartbeat"] as? Double ?? 15
    let retryAfter = (try await sandbox.admin("POST", "stream", [:]))["retry_after"] as? Int ?? 300
    // The heartbeat in real seconds, announced in the watcher's (its idle limit counts in the watcher's time).
    try await sandbox.admin("POST", "config", ["heartbeat": EventSoakClock.real(15), "heartbeat_announced": 15])
    return {
        try await sandbox.admin("POST", "config", ["heartbeat": heartbeat, "heartbeat_announced": NSNull()])
        try await sandbox.admin("POST", "stream", ["retry_after": retryAfter])
    }
}

/// The watcher under test, on a client whose time runs `EventSoakClock.speedup` times faster.
func eventSoakWatcher(_ sandbox: Sandbox, storage: String, ledger: EventLedger) -> EventWatcher {
    let clock = EventSoakClock()
    let api = ProfirestApi(options: .init(
        baseURL: sandbox.api, clientID: "profirest-kds", language: "en", storage: FileTokenStorage(path: storage),
        retryDelay: 0.05, timeout: 5, clock: { clock.now() }, sleep: { try await EventSoakClock.sleep($0) }))
    return api.eventWatcher(.init(
        restaurantID: "11",
        onEvents: { events in
            ledger.received(events)
            ledger.returned(events)
        },
        onReset: { _ in ledger.reset() },
        onError: { _ in ledger.error() }))
}

/// The chunks in order, each produced live, in an outage or after three drops, with the cuts and cursor expiries
/// between them. At most one chunk is left undelivered before the next is produced, so the faults meet a watcher
/// that is reading, not one that is far behind.
func runEventPlan(_ plan: EventSoakPlan, driver: EventSoakDriver) async throws {
    // A watcher without a cursor starts at the end of the feed: what is produced before it has one is not its to see.
    guard try await driver.wait(30, until: { try await driver.openStreams() > 0 }) else {
        throw BenchFailure("the watcher did not connect to the stream within 30 s")
    }
    for index in 0..<plan.chunks {
        _ = try await driver.wait(30) { driver.ledger.missing <= plan.chunkSize }
        let size = plan.size(ofChunk: index)
        if plan.dropPhases.contains(index) {
            try await driver.threeDrops(then: size)
        } else if plan.outageChunks.contains(index) {
            try await driver.outage(size)
        } else {
            try await driver.produce(size)
        }
        for _ in 0..<plan.share(plan.cuts, at: index) {
            // A moment after the chunk, so that most cuts land while its events are on the way.
            try await Task.sleep(nanoseconds: UInt64.random(in: 0...20_000_000))
            _ = try await driver.cut()
        }
        if plan.expiries.contains(index) { try await driver.expireCursors() }
    }
}

func requestCount(_ key: String, _ before: [String: Any], _ after: [String: Any]) -> Int {
    func count(_ stats: [String: Any]) -> Int { (stats["requests"] as? [String: Any])?[key] as? Int ?? 0 }
    return count(after) - count(before)
}
