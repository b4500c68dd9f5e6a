// ProfirestApi — the facade. Its request methods (ProfirestApi+Requests.swift) build a `ProfirestRequest` and send
// it with `send(_:)`; pairing, consent and the staff session (ProfirestApi+Identity.swift, +Staff.swift) use the
// flows of Auth/; the event feed and the outbox get the same `Core`. Every exchange with the server — API calls,
// the OAuth endpoints, revocations, outbox deliveries, the feed — goes through that one core
// (Pipeline/Core.swift), where the tokens, the attempts and the retries happen; a request gets its
// Idempotency-Key when it becomes an outgoing request (Pipeline/RequestOptions+IdempotencyKey.swift).
import Foundation

/// The Profirest API v2 client: requests, paged lists, errors and retries for one connection.
///
/// Thread-safe (`Sendable`); share one instance per connection.
///
/// ```swift
/// let api = ProfirestApi(options: .init(clientID: "profirest-dochazka", storage: MemoryTokenStorage()))
/// ```
public final class ProfirestApi: Sendable {
    /// The options this client was made with.
    ///
    /// ```swift
    /// api.options.baseURL
    /// ```
    public let options: Options

    /// Everything a call needs, built once from the options: the one way to the server.
    let core: Core
    /// The device's tokens and the employee's session (Auth/); the core asks it for the tokens of each attempt.
    let identity: Identity
    /// Told whenever the client's state may have changed (the store, the staff session, an outbox, the feed):
    /// `stateChanges` listens.
    let changes: ChangeSignal
    /// The event feed's readers running now: their status for `state`, and `wakeEventFeeds()`.
    let feeds: FeedRegistry
    /// The outboxes opened through this client, for `state`.
    let outboxes = OutboxList()

    /// A client for one connection.
    ///
    /// - Parameter options: the address, your client_id, the token storage, retries and the rest; see ``Options``.
    ///
    /// ```swift
    /// let api = ProfirestApi(options: .init(baseURL: "http://127.0.0.1:8080"))
    /// ```
    public convenience init(options: Options) {
        self.init(options: options, authorizer: nil)
    }

    /// The full initializer: `authorizer` nil means the identity's (stored tokens, refresh, staff session);
    /// unit tests of the core pass their own, and drive the per-attempt timer and the jitter.
    init(
        options: Options, authorizer: (any RequestAuthorizer)?,
        attemptTimer: @escaping @Sendable (TimeInterval) async throws -> Void = RealTime.sleep,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.options = options
        let base: Result<APIBase, ProfirestUsageError>
        do {
            base = .success(try APIBase(baseURL: options.baseURL))
        } catch let error as ProfirestUsageError {
            // Reported by the first call: the initializer does not throw, as the reference's examples show.
            base = .failure(error)
        } catch {
            base = .failure(ProfirestUsageError("baseURL \"\(Origin.redactingUserInfo(options.baseURL))\" is not usable"))
        }
        let clock = options.clock ?? { Date() }
        let sleep = options.sleep ?? RealTime.sleep
        let changes = ChangeSignal()
        self.changes = changes
        feeds = FeedRegistry(changes: changes)
        identity = Identity(
            fixedAccessToken: options.accessToken, refreshMargin: options.refreshMargin, onUnpaired: options.onUnpaired,
            onStaffExpired: options.onStaffExpired, observe: options.observer, clock: clock, sleep: sleep,
            changes: changes)
        core = Core(
            base: base,
            transport: options.transport
                ?? DefaultTransport.make(trusting: options.trustedCertificates, observe: options.observer),
            store: StateStore(
                storage: options.storage, key: options.effectiveStorageKey,
                onUnsavedChange: Self.storageReporter(options.observer), sleep: RealTime.sleep, changes: changes),
            authorizer: authorizer ?? identity, clientID: options.clientID, clientSecret: options.clientSecret,
            language: options.language, timeout: options.timeout, maxResponseBytes: options.maxResponseBytes,
            retries: options.retries,
            schedule: RetrySchedule(retryDelay: options.retryDelay, maxRetryWait: options.maxRetryWait, random: random),
            clock: clock, sleep: sleep, attemptTimer: attemptTimer, observe: options.observer)
    }

    /// Tells the observer when state could not be written, and when it finally was.
    private static func storageReporter(_ observe: (@Sendable (ProfirestEvent) -> Void)?)
        -> (@Sendable (StorageError?) -> Void)?
    {
        guard let observe else { return nil }
        return { failure in
            if let failure {
                observe(.stateNotSaved(reason: failure.description))
            } else {
                observe(.stateSaved)
            }
        }
    }

    /// A new UUIDv7 (RFC 9562) for record ids, strictly increasing within the process.
    ///
    /// ```swift
    /// let id: String = ProfirestApi.uuid()
    /// ```
    public static func uuid() -> String { UUIDv7.make(now: Date()) }
}

extension ProfirestApi {
    /// How far the server's clock is ahead of this device's, in seconds (negative: behind), from the `Date` header of
    /// the latest answer; nil before the first. Retry-After dates and staff sessions are already measured by the
    /// server's clock; show this when a register's clock needs setting (the observer hears `.clockOffset` once when it
    /// is over a minute).
    ///
    /// ```swift
    /// if let offset = api.serverClockOffset, abs(offset) > 60 { warn("Set the register's clock") }
    /// ```
    public var serverClockOffset: TimeInterval? { core.serverClock.offset }
}
