import Foundation

/// The event feed's decisions about time — when to try the stream, how long to wait after a dropped connection,
/// after a poll or after an error — kept apart from the reading so that each rule of the reference is one method.
struct FeedSchedule: Sendable {
    /// A dropped connection is retried after this, then twice this (or the server's `retry` field, doubled).
    static let reconnectDelay: TimeInterval = 2
    /// How far the wait after a healthy stream's end strays from the reconnection time, either way.
    static let reconnectJitter = 0.25
    /// After this many dropped connections in a row the feed polls for `pollAfterDrops`, then tries again.
    static let dropsBeforePolling = 3
    static let pollAfterDrops: TimeInterval = 60
    /// How long to poll after a stream that did not prove itself in time (a buffering proxy), the first time; it
    /// doubles with each such stream in a row, up to `streamRetryCap`.
    static let pollAfterSlowStart: TimeInterval = 60
    static let streamRetryCap: TimeInterval = 600
    /// How long to poll after `503 stream_unavailable` (or a server without the stream) without a Retry-After.
    static let streamUnavailableWait: TimeInterval = 300
    /// The longest wait after an error without a Retry-After.
    static let errorWaitCap: TimeInterval = 60

    /// When the stream may be tried (again); nil = never: `stream: false`, or a transport that cannot stream.
    private(set) var streamAt: Date?
    /// The wait before the first reconnection: 2 s, or what the server's `retry` field said.
    private(set) var reconnectDelay = FeedSchedule.reconnectDelay
    /// Connections in a row that ended before they delivered anything.
    private(set) var drops = 0
    /// Streams in a row that did not prove themselves within the start deadline.
    private(set) var slowStarts = 0
    /// Errors in a row, for the growing wait.
    private(set) var errors = 0

    init(streaming: Bool, now: Date) {
        streamAt = streaming ? now : nil
    }

    func streamDue(now: Date) -> Bool {
        guard let streamAt else { return false }
        return now >= streamAt
    }

    /// The server's reconnection time (`retry:`, milliseconds) replaces the 2 s, within reason.
    mutating func serverRetry(milliseconds: Int) {
        reconnectDelay = min(max(Double(milliseconds) / 1000, 0), Self.errorWaitCap)
    }

    /// A stream connection ended or could not be made. `healthy` when it brought events or keep-alives first: its
    /// end is no failure (a proxy's idle timeout, a load balancer moving it, the event service restarting) and does
    /// not count toward polling, but the feed waits the reconnection time ±25 % (`unit`, 0..<1, picks where in that
    /// range) before connecting again, as the event-stream model says — so that a fleet whose streams the server cut
    /// at once comes back spread over a second rather than in one burst. Only connections in a row that never
    /// became healthy count toward polling; they wait 2 s, then 4 s (or the server's `retry`, doubled). Returns the
    /// wait before connecting again, or nil when the feed should poll now (the stream is tried again a minute later).
    mutating func streamDropped(healthy: Bool, unit: Double, now: Date) -> TimeInterval? {
        if healthy {
            drops = 0
            slowStarts = 0
            return reconnectDelay * (1 - Self.reconnectJitter + 2 * Self.reconnectJitter * min(max(unit, 0), 1))
        }
        drops += 1
        if drops >= Self.dropsBeforePolling {
            drops = 0
            streamAt = now.addingTimeInterval(Self.pollAfterDrops)
            return nil
        }
        return reconnectDelay * pow(2, Double(drops - 1))
    }

    /// The stream's head or first bytes did not come within the start deadline (a proxy that buffers it): poll now,
    /// and try the stream again after a minute, then two, four… up to ten.
    mutating func streamStartedTooSlowly(now: Date) {
        drops = 0
        slowStarts += 1
        let wait = min(Self.pollAfterSlowStart * pow(2, Double(slowStarts - 1)), Self.streamRetryCap)
        streamAt = now.addingTimeInterval(wait)
    }

    /// The stream is not served now (503) or not at all by this server (404): poll until Retry-After has passed.
    mutating func streamUnavailable(retryAfter: Int?, now: Date) {
        drops = 0
        streamAt = now.addingTimeInterval(retryAfter.map(Double.init) ?? Self.streamUnavailableWait)
    }

    /// The wait after a poll that did not fill its page: the interval, cut short when the stream is due earlier.
    func pollWait(interval: TimeInterval, now: Date) -> TimeInterval {
        guard let streamAt else { return interval }
        return min(interval, max(streamAt.timeIntervalSince(now), 0))
    }

    mutating func succeeded() { errors = 0 }

    /// The wait after an error: its Retry-After, or a growing wait from `base` up to 60 s (±25 %, never above 60 s).
    mutating func failed(retryAfter: Int?, schedule: RetrySchedule) -> TimeInterval {
        errors += 1
        return schedule.roundWait(retryAfter: retryAfter, round: errors - 1, longestRetryAfter: .infinity, cap: Self.errorWaitCap)
    }
}
