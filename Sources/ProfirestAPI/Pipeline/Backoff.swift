import Foundation

/// The wait before an automatic retry when the server gave no Retry-After.
///
/// The base doubles from `retryDelay` (1 s, 2 s, 4 s …) up to 30 s; each wait is that base ±25 %, so devices that
/// failed together after an outage do not all come back in the same second. The jitter applies at the cap too
/// (22.5–37.5 s) for the same reason.
enum Backoff {
    static let cap: TimeInterval = 30

    /// - Parameters:
    ///   - retry: 0 for the first retry, 1 for the second…
    ///   - unit: a random number in 0..<1 (injected so tests can pin it).
    ///   - cap: the longest base; the event feed waits out errors longer (60 s) than a request does.
    static func delay(retry: Int, base: TimeInterval, unit: Double, cap: TimeInterval = Backoff.cap) -> TimeInterval {
        let doubled = base * pow(2, Double(min(retry, 30)))
        let capped = min(max(doubled, 0), cap)
        return capped * (0.75 + 0.5 * min(max(unit, 0), 1))
    }
}
