import Foundation

/// Which failures are worth sending again — the one place that decides it, for the pipeline's own retries and for
/// the outbox's keep-or-refuse verdict. The pipeline retries what the contract's error catalog marks retryable (its
/// `retryable` column, generated into `ErrorCatalog`); the outbox keeps those waiting too, plus the failures that say
/// nothing about the write itself. The reference's table, row by row:
///
/// | failure                                              | pipeline retries | outbox keeps the write |
/// |------------------------------------------------------|------------------|------------------------|
/// | network_error, timeout                               | yes (POST too, same Idempotency-Key) | yes |
/// | 429 rate_limited, 409 idempotency_in_progress        | yes              | yes                    |
/// | 500, 502, 503, 504 (and stream_unavailable)          | yes              | yes                    |
/// | another status-0 failure (invalid_response, certificate_untrusted), another 5xx (a gateway's 520–524), a 3xx (unexpected_redirect), a proxy's 407 | no | yes: no answer from the API, nothing known about the write |
/// | 401 invalid_token, not_paired, 403 insufficient_scope | no (invalid_token: once after a refresh, see `RequestPipeline`) | yes: the connection's state, which the app can put right |
/// | 429 staff_locked, every other 4xx                    | no               | no: refused for good   |
///
/// A code this library does not know yet is judged by its status: 500, 502, 503 and 504 are retried, nothing else.
enum RetryPolicy {
    /// Whether the pipeline sends a request that failed this way again by itself: the catalog's `retryable` column.
    static func isRetryable(code: String, status: Int) -> Bool {
        if let entry = ErrorCatalog.entry(for: code) { return entry.retryable }
        // By code first: a 429 staff_locked is a lock after wrong PINs, and a newer server's 4xx is no reason to retry.
        return [500, 502, 503, 504].contains(status)
    }

    /// Whether an outbox write that failed this way stays queued (true) or is refused for good and leaves the queue
    /// (false): whatever the pipeline would retry, whatever came without an answer from the API, and the
    /// connection's own state. Everything else is the write's own fault, final.
    static func keepsWriteWaiting(_ error: ProfirestAPIError) -> Bool {
        if isRetryable(code: error.code, status: error.status) { return true }
        if error.status == 0 || (500...599).contains(error.status) || (300...399).contains(error.status) { return true }
        return connectionState.contains(error.code)
    }

    /// Codes about the device's connection rather than the write: a refreshed token, a new pairing or a wider scope
    /// makes the same write go through; a proxy's login is not the API's answer at all.
    static let connectionState: Set<String> = [
        ErrorCode.invalidToken, ErrorCode.notPaired, ErrorCode.insufficientScope, ErrorCode.proxyAuthenticationRequired,
    ]
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
