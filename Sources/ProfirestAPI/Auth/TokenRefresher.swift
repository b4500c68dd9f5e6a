import Foundation

/// Hands the request pipeline a valid access token and renews it — once, however many requests ask at the same
/// time, and once across processes that share the storage.
///
/// - Concurrent callers during a refresh await the same in-flight task.
/// - A token is renewed `refreshMargin` before it expires, and after a 401 `invalid_token` only when the rejected
///   token is still the current one (otherwise the newer one is returned without a request).
/// - The refresh runs inside the storage lock and re-reads the state there: when another process has already
///   rotated the tokens, its fresh token is adopted without a request (`RefreshStep`).
/// - `invalid_grant` deletes the tokens, calls `onUnpaired` and fails with `AuthFailure.notPaired`;
///   `invalid_client` / `unauthorized_client` keep the tokens and are thrown as they are; a network failure or a
///   5xx is retried a couple of times (the server forgives a replay of the just-rotated refresh token whose answer
///   was lost), then thrown with the tokens kept.
/// - A storm guard allows at most `stormLimit` refreshes per `stormWindow`.
/// - The generation counter of the `StateStore` makes a refresh that raced with `unpair()` or a new pairing lose:
///   its result is never written, and callers get the state that won.
/// - A fixed access token is returned as it is and never refreshed.
actor TokenRefresher {
    struct Settings: Sendable {
        /// nil when the client has no client_id: only a fixed token can work then.
        var client: OAuthClient?
        var fixedAccessToken: String?
        var refreshMargin: TimeInterval = 60
        var stormLimit: Int = 5
        var stormWindow: TimeInterval = 60
        /// Waits before sending a refresh again after a network failure or a 5xx. Short: the storage lock is held.
        var refreshRetryDelays: [TimeInterval] = [1, 2]
    }

    private let store: StateStore
    private let endpoint: any OAuthEndpoint
    private let settings: Settings
    private let clock: @Sendable () -> Date
    private let sleep: @Sendable (TimeInterval) async throws -> Void
    private let onUnpaired: (@Sendable () -> Void)?
    /// The generation in which the loss of the pairing was reported (the one after its bump), so it is reported once.
    private var lossReportedGeneration: UInt64?
    private let observe: (@Sendable (ProfirestEvent) -> Void)?
    private var inFlight: Task<String, Error>?
    private var refreshTimes: [Date] = []

    init(
        store: StateStore, endpoint: any OAuthEndpoint, settings: Settings,
        clock: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = RealTime.sleep,
        onUnpaired: (@Sendable () -> Void)? = nil, observe: (@Sendable (ProfirestEvent) -> Void)? = nil
    ) {
        self.store = store
        self.endpoint = endpoint
        self.settings = settings
        self.clock = clock
        self.sleep = sleep
        self.onUnpaired = onUnpaired
        self.observe = observe
    }

    /// A token to send now: the stored one while fresh, otherwise a renewed one.
    /// Throws `AuthFailure.notPaired` when there are no tokens.
    ///
    /// Nonisolated: a fresh token (nearly every call) is read from the store's lock-protected snapshot without a
    /// hop onto the actor, and callers waiting for a refresh await its task outside the actor, so when it ends
    /// they all resume at once on the global executor instead of one after another through the actor.
    nonisolated func accessToken() async throws -> String {
        if let fixed = settings.fixedAccessToken { return fixed }
        var state = store.snapshot
        if !state.hasTokens {
            // Slow path only: surfaces a corrupt document as its error, and sees a pairing made by another process.
            state = try store.read()
            guard state.hasTokens else { throw AuthFailure.notPaired }
        }
        if let token = state.accessToken, RefreshStep.isFresh(state, now: clock(), margin: settings.refreshMargin) {
            return token
        }
        return try await sharedRefresh(replacing: state.accessToken).value
    }

    /// After a 401 `invalid_token` for `rejected`: a newer token to retry with, or nil when there is none to get
    /// (a fixed token) and the 401 stands.
    nonisolated func refresh(afterRejecting rejected: String) async throws -> String? {
        if settings.fixedAccessToken != nil { return nil }
        var state = store.snapshot
        if !state.hasTokens {
            state = try store.read()
            guard state.hasTokens else { throw AuthFailure.notPaired }
        }
        if let token = state.accessToken, token != rejected,
            RefreshStep.isFresh(state, now: clock(), margin: settings.refreshMargin)
        {
            return token
        }
        return try await sharedRefresh(replacing: rejected).value
    }

    /// Forgets the connection locally (tokens, restaurant, device, pending consent; event cursors stay). With
    /// `revoke` (and a client to revoke with), the refresh token moves to the pending revocations in the same write,
    /// for `GrantRevocation` to end on the server; returns it. Bumps the generation first, so a refresh in flight is
    /// discarded instead of bringing the tokens back.
    @discardableResult
    func unpair(revoke: Bool = true) async throws -> String? {
        store.bumpGeneration()
        let park = revoke && settings.client != nil
        // Inside the lock: another process may have rotated the refresh token since our last look.
        return try await store.updateAsync { state -> String? in
            let parked = park ? state.parkRefreshToken() : nil
            state.forgetConnection()
            return parked
        }
    }

    /// The refresh in flight, or a new one. Only the task clears `inFlight`, when it ends: no other refresh can
    /// start while it runs, so the one it clears is always itself.
    private func sharedRefresh(replacing old: String?) -> Task<String, Error> {
        if let running = inFlight { return running }
        let task = Task {
            defer { inFlight = nil }
            return try await performRefresh(replacing: old)
        }
        inFlight = task
        return task
    }

    private func performRefresh(replacing old: String?) async throws -> String {
        guard let client = settings.client else {
            throw ProfirestUsageError(
                "The stored tokens can only be renewed with the client_id they were issued to: pass clientID in "
                    + "the options (or a fixed accessToken, which is never renewed).")
        }
        let generation = store.generation
        let step = RefreshStep(
            store: store, endpoint: endpoint, client: client, margin: settings.refreshMargin, clock: clock,
            replacing: old, generation: generation, limit: stormGuard(), retryDelays: settings.refreshRetryDelays,
            sleep: sleep)
        let outcome = try await store.exclusive { try step.run($0) }
        // The actor was released during the await: re-check that the connection is still the one we refreshed.
        switch outcome {
        case .refreshed(let token):
            refreshTimes.append(clock())
            observe?(.tokenRefreshed(byThisProcess: true))
            if store.generation == generation { return token }
            return try tokenAfterChange(replacing: old)
        case .adopted(let token):
            observe?(.tokenRefreshed(byThisProcess: false))
            if store.generation == generation { return token }
            return try tokenAfterChange(replacing: old)
        case .discarded:
            return try tokenAfterChange(replacing: old)
        case .lost:
            // Once per connection: a caller that saw the tokens just before another refresh lost them finds them
            // gone and must not report the loss a second time; a new pairing is a new generation.
            if lossReportedGeneration != generation {
                lossReportedGeneration = store.bumpGeneration()
                onUnpaired?()
            }
            throw AuthFailure.notPaired
        }
    }

    /// The connection changed under a refresh: use the winner's token if it stored a usable one.
    private func tokenAfterChange(replacing old: String?) throws -> String {
        let state = store.snapshot
        if let token = state.accessToken, token != old,
            RefreshStep.isFresh(state, now: clock(), margin: settings.refreshMargin)
        {
            return token
        }
        throw AuthFailure.notPaired
    }

    /// nil while another refresh is allowed; otherwise the failure to throw instead of a request.
    private func stormGuard() -> AuthFailure? {
        let now = clock()
        refreshTimes.removeAll { now.timeIntervalSince($0) >= settings.stormWindow }
        guard refreshTimes.count >= settings.stormLimit, let oldest = refreshTimes.first else { return nil }
        let wait = max(1, Int((settings.stormWindow - now.timeIntervalSince(oldest)).rounded(.up)))
        return .refreshLimit(count: refreshTimes.count, window: Int(settings.stormWindow), retryAfter: wait)
    }
}
