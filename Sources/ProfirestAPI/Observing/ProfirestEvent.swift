import Foundation

/// Something the library did, for the app's log or diagnostics: attempts, retries, refreshes, pairing, staff
/// sessions, the event feed and the outbox, handed to the `observer` option as it happens.
///
/// Redacted by construction: no case carries an access or refresh token, a staff token, a PIN, a client secret or
/// a body — only methods, paths without their query, statuses, codes, ids and times — so everything here may be
/// logged as it is.
///
/// ```swift
/// let api = ProfirestApi(options: .init(clientID: "profirest-pos", observer: { event in
///     FileHandle.standardError.write(Data("profirest: \(event)\n".utf8))
/// }))
/// ```
public enum ProfirestEvent: Sendable, Hashable, CustomStringConvertible {
    /// An attempt of a request is about to be sent.
    case attemptStarted(Attempt)
    /// An attempt ended: with an answer (`status`), or without one (`status` 0, `errorCode` network_error or
    /// timeout).
    case attemptFinished(Attempt, AttemptResult)
    /// The library waits `delay` seconds before the next attempt.
    case retryScheduled(Attempt, delay: TimeInterval, reason: RetryReason)
    /// New tokens: refreshed by this process, or found already refreshed by another sharing the storage.
    case tokenRefreshed(byThisProcess: Bool)
    /// The device was paired, or a partner connected.
    case paired
    /// The connection was forgotten: `requested` by `unpair()`, or `invalid_grant` when the server ended it.
    case unpaired(reason: String)
    /// Revoking a grant on the server failed (it stays valid until it expires); the code says why.
    case revocationFailed(code: String)
    /// An employee signed in.
    case staffSignedIn(employeeID: String)
    /// The staff session ended: `expired` (inactivity or its maximum, or the server ended it) or signed out.
    case staffSessionEnded(employeeID: String, expired: Bool)
    /// The event feed's reading changed: connected to the stream, the stream dropped, or polling.
    case feed(FeedChange)
    /// The outbox took a write in, delivered it, or it was refused for good or is waiting.
    case outbox(OutboxChange)
    /// The default transport could not be used and the client went on with another: on Linux, libcurl could not be
    /// loaded, so requests go through `URLSessionTransport` (FoundationNetworking) instead. Said once per client.
    case transportFallback(reason: String)
    /// The connection's state could not be written (a full disk, a locked keychain): what the server issued is kept in
    /// memory and used, and written again until it can be (`ProfirestApi.storageError` says why meanwhile). Said once
    /// per outage; `.stateSaved` ends it.
    case stateNotSaved(reason: String)
    /// State kept in memory after `.stateNotSaved` is in the storage now (or another process's newer state replaced
    /// it).
    case stateSaved
    /// The device's clock differs from the server's by more than a minute (`seconds` is the server's time minus the
    /// device's, from the `Date` header of an answer): Retry-After dates and staff sessions are measured by the
    /// server's time regardless, but a punch's `occurred_at` is the device's time. Said once per client.
    case clockOffset(seconds: TimeInterval)

    /// One attempt of one request, as much as is safe to log.
    ///
    /// ```swift
    /// attempt.method
    /// ```
    public struct Attempt: Sendable, Hashable {
        /// GET, POST, …
        ///
        /// ```swift
        /// attempt.method
        /// ```
        public let method: String
        /// The URL's path, without the query (a query may carry a signature).
        ///
        /// ```swift
        /// attempt.path
        /// ```
        public let path: String
        /// 1 for the first attempt.
        ///
        /// ```swift
        /// attempt.number
        /// ```
        public let number: Int
        /// The request's Idempotency-Key, if it has one.
        ///
        /// ```swift
        /// attempt.idempotencyKey
        /// ```
        public let idempotencyKey: String?
    }

    /// How an attempt ended.
    ///
    /// ```swift
    /// result.status
    /// ```
    public struct AttemptResult: Sendable, Hashable {
        /// The HTTP status; 0 when no answer came.
        ///
        /// ```swift
        /// result.status
        /// ```
        public let status: Int
        /// How long the attempt took, in seconds.
        ///
        /// ```swift
        /// result.duration
        /// ```
        public let duration: TimeInterval
        /// The server's Profirest-Request-Id, for support.
        ///
        /// ```swift
        /// result.requestID
        /// ```
        public let requestID: String?
        /// The error's catalog or library code; nil for a success.
        ///
        /// ```swift
        /// result.errorCode
        /// ```
        public let errorCode: String?
    }

    /// Why the library waits before the next attempt.
    ///
    /// ```swift
    /// reason == .retryAfter
    /// ```
    public enum RetryReason: String, Sendable, Hashable {
        /// The server's Retry-After.
        case retryAfter = "retry_after"
        /// The doubling delay with jitter.
        case backoff
    }

    /// A change in how the event feed is read.
    ///
    /// ```swift
    /// case .connected:
    /// ```
    public enum FeedChange: String, Sendable, Hashable {
        /// The live stream is connected.
        case connected
        /// The stream connection ended or could not be made.
        case dropped
        /// The feed is polled (the stream is not served, or dropped three times in a row).
        case polling
    }

    /// What happened to a write in the outbox.
    ///
    /// ```swift
    /// case .delivered(let id):
    /// ```
    public enum OutboxChange: Sendable, Hashable {
        /// Journaled.
        case enqueued(id: String)
        /// The server recorded it.
        case delivered(id: String)
        /// Refused for good, with the code.
        case refused(id: String, code: String)
        /// Still waiting after an attempt, with the code of its failure.
        case waiting(id: String, code: String)
    }

    /// One line for a log.
    ///
    /// ```swift
    /// print(event)
    /// ```
    public var description: String {
        switch self {
        case .attemptStarted(let a):
            return "attempt \(a.number) \(a.method) \(a.path)" + (a.idempotencyKey.map { " key=\($0)" } ?? "")
        case .attemptFinished(let a, let r):
            return "attempt \(a.number) \(a.method) \(a.path) → \(r.status)"
                + (r.errorCode.map { " \($0)" } ?? "") + String(format: " %.0f ms", r.duration * 1000)
                + (r.requestID.map { " request_id=\($0)" } ?? "")
        case .retryScheduled(let a, let delay, let reason):
            return "retry \(a.method) \(a.path) in \(String(format: "%.2f", delay)) s (\(reason.rawValue))"
        case .tokenRefreshed(let mine): return mine ? "token refreshed" : "token refreshed by another process"
        case .paired: return "paired"
        case .unpaired(let reason): return "unpaired (\(reason))"
        case .revocationFailed(let code): return "revocation failed (\(code))"
        case .staffSignedIn(let id): return "staff signed in \(id)"
        case .staffSessionEnded(let id, let expired): return "staff session of \(id) \(expired ? "expired" : "signed out")"
        case .feed(let change): return "event feed \(change.rawValue)"
        case .outbox(.enqueued(let id)): return "outbox enqueued \(id)"
        case .outbox(.delivered(let id)): return "outbox delivered \(id)"
        case .outbox(.refused(let id, let code)): return "outbox refused \(id) (\(code))"
        case .outbox(.waiting(let id, let code)): return "outbox waiting \(id) (\(code))"
        case .transportFallback(let reason): return "transport: \(reason); using URLSessionTransport"
        case .stateNotSaved(let reason): return "state not saved, kept in memory: \(reason)"
        case .stateSaved: return "state saved"
        case .clockOffset(let seconds):
            return "clock: the device's clock is \(Int(abs(seconds).rounded())) s \(seconds > 0 ? "behind" : "ahead of") the server's"
        }
    }
}
