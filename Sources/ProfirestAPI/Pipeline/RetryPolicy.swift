import Foundation

/// Which failures the library retries by itself — the reference's table, row by row:
///
/// | failure                          | retried |
/// |----------------------------------|---------|
/// | network_error, timeout           | yes (POST too, same Idempotency-Key) |
/// | 429 rate_limited                 | yes     |
/// | 409 idempotency_in_progress      | yes     |
/// | 500, 502, 503, 504               | yes     |
/// | 401 invalid_token                | once, after a token refresh, not counted (see `RequestPipeline`) |
/// | 429 staff_locked, every other 4xx, 3xx | no |
enum RetryPolicy {
    static func isRetryable(code: String, status: Int) -> Bool {
        switch status {
        case 0: return code == ErrorCode.networkError || code == ErrorCode.timeout
        case 500, 502, 503, 504: return true
        // By code, not status: a 429 staff_locked is a lock after wrong PINs, retrying would only extend it.
        case 429: return code == ErrorCode.rateLimited
        case 409: return code == ErrorCode.idempotencyInProgress
        default: return false
        }
    }
}

/// How long to wait before a retry, by the reference's table: the client's `retries`, the doubling `retryDelay`
/// with jitter, and a Retry-After that wins unless it is longer than `maxRetryWait` (then the error goes to the
/// caller with its seconds). The pipeline and the calls outside it that may be sent again (a revocation) use it.
struct RetrySchedule: Sendable {
    var retries = 3
    var retryDelay: TimeInterval = 1
    var maxRetryWait: TimeInterval = 30
    /// 0..<1 for the backoff jitter; tests pin it.
    var random: @Sendable () -> Double = { Double.random(in: 0..<1) }

    /// The wait before retry number `retriesUsed + 1` (at most `limit`), or nil when `failure` goes to the caller.
    func wait(after failure: ProfirestAPIError, retriesUsed: Int, limit: Int) -> TimeInterval? {
        guard failure.retryable, retriesUsed < limit else { return nil }
        if let seconds = failure.retryAfter {
            return Double(seconds) > maxRetryWait ? nil : Double(seconds)
        }
        return Backoff.delay(retry: retriesUsed, base: retryDelay, unit: random())
    }
}
