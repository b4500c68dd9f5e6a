import Foundation

/// When a failed call goes again: the wait before each retry of a `SendPolicy`, the reference's retry table
/// (`RetrySchedule`, `Backoff`) — also the waits between the rounds of the loops that never give up (the outbox, the
/// event feed) — and the outbox's keep-or-refuse rule, all on the error catalog's `retryable` column
/// (`ProfirestAPIError.isRetryable`).
extension SendPolicy {
    /// The wait before retry number `retriesUsed + 1`, or nil when `failure` goes to the caller.
    func wait(after failure: ProfirestAPIError, retriesUsed: Int, schedule: RetrySchedule) -> TimeInterval? {
        guard failure.retryable, retriesUsed < retries else { return nil }
        if let fixedWaits, retriesUsed < fixedWaits.count { return fixedWaits[retriesUsed] }
        return schedule.wait(after: failure, retriesUsed: retriesUsed)
    }

    /// Whether an outbox write that failed this way stays queued (true) or is refused for good and leaves the queue
    /// (false): whatever a call would retry, whatever came without an answer from the API, and the connection's own
    /// state. Everything else is the write's own fault, final.
    ///
    /// | failure                                              | a call retries | the outbox keeps the write |
    /// |------------------------------------------------------|----------------|----------------------------|
    /// | network_error, timeout                               | yes (POST too, same Idempotency-Key) | yes |
    /// | 429 rate_limited, 409 idempotency_in_progress        | yes            | yes                        |
    /// | 500, 502, 503, 504 (and stream_unavailable)          | yes            | yes                        |
    /// | another status-0 failure (invalid_response, certificate_untrusted), another 5xx (a gateway's 520–524), a 3xx (unexpected_redirect), a proxy's 407 | no | yes: no answer from the API, nothing known about the write |
    /// | 401 invalid_token, not_paired, 403 insufficient_scope | no (invalid_token: once after a refresh) | yes: the connection's state, which the app can put right |
    /// | 429 staff_locked, every other 4xx                    | no             | no: refused for good       |
    static func keepsWriteWaiting(_ error: ProfirestAPIError) -> Bool {
        if ProfirestAPIError.isRetryable(code: error.code, status: error.status) { return true }
        if error.status == 0 || (500...599).contains(error.status) || (300...399).contains(error.status) { return true }
        return connectionState.contains(error.code)
    }

    /// Codes about the device's connection rather than the write: a refreshed token, a new pairing or a wider scope
    /// makes the same write go through; a proxy's login is not the API's answer at all.
    static let connectionState: Set<String> = [
        ErrorCode.invalidToken, ErrorCode.notPaired, ErrorCode.insufficientScope, ErrorCode.proxyAuthenticationRequired,
    ]
}

/// Whether a failed request may go out again, by RFC 9110 §9.2.2: a client repeats a request automatically only when
/// the server cannot have acted on it, or when acting twice does no harm.
///
/// | failure                                                        | idempotent method, Idempotency-Key or If-Match | other (a POST with `.none`, a PATCH without key or If-Match) |
/// |----------------------------------------------------------------|-----------|-----------|
/// | nothing was sent: no connection, DNS, TLS handshake, offline   | retried   | retried   |
/// | 429, 503: the server says it did not handle the request        | retried   | retried   |
/// | cut off or silent after sending (a timeout, a lost connection, an answer cut mid-head or mid-body), 500, 502, 504 | retried | sent once |
///
/// A request with If-Match counts as safe: once the first one has changed the resource, its ETag no longer matches
/// and a repeat is refused with 412 instead of being applied twice.
enum Repetition {
    /// RFC 9110 §9.2.2's idempotent methods.
    static let idempotentMethods: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]

    /// Transport failures that happen before the request leaves the device: what `URLSessionTransport` and
    /// `CurlTransport` throw when no connection was made, a transport of the app's own should throw the same.
    static let nothingSentCodes: Set<URLError.Code> = [
        .cannotFindHost, .cannotConnectToHost, .dnsLookupFailed, .notConnectedToInternet, .secureConnectionFailed,
        .internationalRoamingOff, .callIsActive, .dataNotAllowed, .badURL, .unsupportedURL,
        .clientCertificateRejected, .clientCertificateRequired, .serverCertificateUntrusted,
        .serverCertificateHasUnknownRoot, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
    ]

    /// Whether the server may get `request` twice without harm.
    static func safe(_ request: OutgoingRequest) -> Bool {
        request.knownSafeToRepeat || idempotentMethods.contains(request.method)
            || HTTPHeaders.value(RequestOptions.IdempotencyKey.header, in: request.headers) != nil
            || HTTPHeaders.value("If-Match", in: request.headers) != nil
    }

    /// Whether `failure` leaves `request` free to go again (the catalog then decides whether it is worth it).
    static func mayRepeat(_ request: OutgoingRequest, after failure: ProfirestAPIError) -> Bool {
        if safe(request) { return true }
        switch failure.status {
        case 0: return nothingSent(failure)
        case 429, 503: return true
        default: return false
        }
    }

    /// Whether the transport failed before any byte of the request left the device.
    static func nothingSent(_ failure: ProfirestAPIError) -> Bool {
        guard failure.status == 0, let error = failure.underlyingError as? URLError else { return false }
        return nothingSentCodes.contains(error.code)
    }
}

/// The reference's retry table: the doubling `retryDelay` with jitter, and a Retry-After that wins unless it is
/// longer than `maxRetryWait` (then the error goes to the caller with its seconds).
struct RetrySchedule: Sendable {
    var retryDelay: TimeInterval = 1
    var maxRetryWait: TimeInterval = 30
    /// 0..<1 for the backoff jitter; tests pin it.
    var random: @Sendable () -> Double = { Double.random(in: 0..<1) }

    /// The wait before retry number `retriesUsed + 1` of a retryable failure, or nil when its Retry-After is too long.
    func wait(after failure: ProfirestAPIError, retriesUsed: Int) -> TimeInterval? {
        if let seconds = failure.retryAfter {
            return Double(seconds) > maxRetryWait ? nil : Double(seconds)
        }
        return Backoff.delay(retry: retriesUsed, base: retryDelay, unit: random())
    }

    /// The wait before round `round` (0 first) of a loop that must not give up — the outbox's deliveries, the event
    /// feed after an error: the server's Retry-After up to `longestRetryAfter`, or the doubling backoff up to `cap`.
    func roundWait(retryAfter: Int?, round: Int, longestRetryAfter: TimeInterval, cap: TimeInterval = Backoff.cap)
        -> TimeInterval
    {
        if let retryAfter { return min(Double(retryAfter), longestRetryAfter) }
        return min(Backoff.delay(retry: round, base: retryDelay, unit: random(), cap: cap), cap)
    }
}

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
