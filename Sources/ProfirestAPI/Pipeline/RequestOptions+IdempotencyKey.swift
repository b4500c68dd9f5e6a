import Foundation

extension RequestOptions.IdempotencyKey {
    static let header = "Idempotency-Key"

    /// Where a request gets its `Idempotency-Key`, chosen once per call (in `outgoing`) so every automatic retry
    /// repeats it:
    ///
    /// - POST with `.auto` (the default): a new UUIDv7 — also when `retries` is 0, because a caller or a proxy may
    ///   still repeat the request.
    /// - `.key(…)` or a string literal: the caller's key, on any method but GET/HEAD.
    /// - `.none`: no key.
    /// - GET and HEAD never carry one: they are safe to repeat anyway and the server ignores it there.
    func value(method: String, now: Date) -> String? {
        if method == "GET" || method == "HEAD" { return nil }
        switch self {
        case .none: return nil
        case .key(let key): return key
        case .auto: return method == "POST" ? UUIDv7.make(now: now) : nil
        }
    }
}
