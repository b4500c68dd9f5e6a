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
