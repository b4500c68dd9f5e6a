import Foundation

/// Renews the access token — once, however many requests ask at the same time, and once across processes that
/// share the storage.
///
/// - Concurrent callers during a refresh await the same in-flight task.
/// - A token is renewed `refreshMargin` before it expires, and after a 401 `invalid_token` only when the rejected
///   token is still the current one (otherwise the newer one is returned without a request).
/// - The refresh runs inside the storage lock and re-reads the state there: when another process has already
///   rotated the tokens, its fresh token is adopted without a request (`LockedRefresh`).
/// - `invalid_grant` deletes the tokens, calls `onUnpaired` and fails with `AuthFailure.notPaired`;
///   `invalid_client` / `unauthorized_client` keep the tokens and are thrown as they are; a failure on the way (the
///   network, a 5xx) is sent again after 1 s and 2 s (`SendPolicy.tokenRequest`), then thrown with the tokens kept.
/// - A storm guard allows at most `stormLimit` refreshes per `stormWindow`.
/// - The generation counter of the `StateStore` makes a refresh that raced with `unpair()` or a new pairing lose:
///   its result is never written, and callers get the state that won.
///
/// It holds no settings of the client: each call gets the `Core` it sends with, and its clock and store.
actor TokenRefresher {
    let refreshMargin: TimeInterval
    let stormLimit: Int
    let stormWindow: TimeInterval
    /// Told once per lost connection, with the core whose request lost it.
    private let onUnpaired: (@Sendable (Core) -> Void)?
    /// The generation in which the loss of the pairing was reported (the one after its bump), so it is reported once.
    private var lossReportedGeneration: UInt64?
    private var inFlight: Task<String, Error>?
    private var refreshTimes: [Date] = []

    init(
        refreshMargin: TimeInterval = 60, stormLimit: Int = 5, stormWindow: TimeInterval = 60,
        onUnpaired: (@Sendable (Core) -> Void)? = nil
    ) {
        self.refreshMargin = refreshMargin
        self.stormLimit = stormLimit
        self.stormWindow = stormWindow
        self.onUnpaired = onUnpaired
    }

    /// A token to send now: the stored one while fresh, otherwise a renewed one.
    /// Throws `AuthFailure.notPaired` when there are no tokens.
    ///
    /// Nonisolated: callers waiting for a refresh await its task outside the actor, so when it ends they all resume
    /// at once on the global executor instead of one after another through the actor.
    nonisolated func accessToken(core: Core) async throws -> String {
        let state = try Self.current(core.store)
        if let token = state.freshAccessToken(now: core.clock(), margin: refreshMargin) { return token }
        return try await sharedRefresh(replacing: state.accessToken, core: core).value
    }

    /// After a 401 `invalid_token` for `rejected`: a newer token to retry with.
    nonisolated func refresh(afterRejecting rejected: String, core: Core) async throws -> String {
        let state = try Self.current(core.store)
        if let token = state.freshAccessToken(now: core.clock(), margin: refreshMargin), token != rejected {
            return token
        }
        return try await sharedRefresh(replacing: rejected, core: core).value
    }

    /// The state with tokens, re-read from the storage when the snapshot has none (a corrupt document surfaces its
    /// error, a pairing made by another process is seen); `AuthFailure.notPaired` without tokens.
    private nonisolated static func current(_ store: StateStore) throws -> StoredState {
        var state = store.snapshot
        if !state.hasTokens {
            state = try store.read()
            guard state.hasTokens else { throw AuthFailure.notPaired }
        }
        return state
    }

    /// Forgets the connection locally (tokens, restaurant, device, pending consent; event cursors stay). With
    /// `revoke` (and a client to revoke with), the refresh token moves to the pending revocations in the same write,
    /// for `GrantRevocation` to end on the server; returns it. Bumps the generation first, so a refresh in flight is
    /// discarded instead of bringing the tokens back.
    @discardableResult
    func unpair(revoke: Bool, core: Core) async throws -> String? {
        core.store.bumpGeneration()
        let park = revoke && OAuthClient.of(core) != nil
        // Inside the lock: another process may have rotated the refresh token since our last look.
        return try await core.store.updateAsync { state -> String? in
            let parked = park ? state.parkRefreshToken() : nil
            state.forgetConnection()
            return parked
        }
    }

    /// The refresh in flight, or a new one. Only the task clears `inFlight`, when it ends: no other refresh can
    /// start while it runs, so the one it clears is always itself.
    private func sharedRefresh(replacing old: String?, core: Core) -> Task<String, Error> {
        if let running = inFlight { return running }
        let task = Task {
            defer { inFlight = nil }
            return try await performRefresh(replacing: old, core: core)
        }
        inFlight = task
        return task
    }

    private func performRefresh(replacing old: String?, core: Core) async throws -> String {
        guard let client = OAuthClient.of(core) else {
            throw ProfirestUsageError(
                "The stored tokens can only be renewed with the client_id they were issued to: pass clientID in "
                    + "the options (or a fixed accessToken, which is never renewed).")
        }
        let store = core.store
        let generation = store.generation
        let step = LockedRefresh(
            core: core, client: client, margin: refreshMargin, replacing: old, generation: generation, limit: stormGuard(now: core.clock()))
        let outcome = try await store.exclusive { try await step.run($0) }
        // The actor was released during the await: re-check that the connection is still the one we refreshed.
        switch outcome {
        case .refreshed(let token):
            refreshTimes.append(core.clock())
            core.observe?(.tokenRefreshed(byThisProcess: true))
            if store.generation == generation { return token }
            return try tokenAfterChange(replacing: old, core: core)
        case .adopted(let token):
            core.observe?(.tokenRefreshed(byThisProcess: false))
            if store.generation == generation { return token }
            return try tokenAfterChange(replacing: old, core: core)
        case .discarded:
            return try tokenAfterChange(replacing: old, core: core)
        case .lost:
            // Once per connection: a caller that saw the tokens just before another refresh lost them finds them
            // gone and must not report the loss a second time; a new pairing is a new generation.
            if lossReportedGeneration != generation {
                lossReportedGeneration = store.bumpGeneration()
                onUnpaired?(core)
            }
            throw AuthFailure.notPaired
        }
    }

    /// The connection changed under a refresh: use the winner's token if it stored a usable one.
    private func tokenAfterChange(replacing old: String?, core: Core) throws -> String {
        if let token = core.store.snapshot.freshAccessToken(now: core.clock(), margin: refreshMargin), token != old {
            return token
        }
        throw AuthFailure.notPaired
    }

    /// nil while another refresh is allowed; otherwise the failure to throw instead of a request.
    private func stormGuard(now: Date) -> AuthFailure? {
        refreshTimes.removeAll { now.timeIntervalSince($0) >= stormWindow }
        guard refreshTimes.count >= stormLimit, let oldest = refreshTimes.first else { return nil }
        let wait = max(1, Int((stormWindow - now.timeIntervalSince(oldest)).rounded(.up)))
        return .refreshLimit(count: refreshTimes.count, window: Int(stormWindow), retryAfter: wait)
    }
}

/// One refresh decision, made while the storage lock is held (see `StateStore.exclusive`), so that of several
/// processes sharing the storage only one spends the single-use refresh token and the others adopt its result.
struct LockedRefresh: Sendable {
    enum Outcome: Sendable, Equatable {
        /// Someone else (another process, or a refresh we joined late) already stored a fresh token.
        case adopted(String)
        /// We refreshed and stored the new tokens.
        case refreshed(String)
        /// The pairing is gone: the server said `invalid_grant`, the access token can no longer be renewed, or the
        /// tokens were deleted meanwhile (by another process, or by a refresh of this one that lost them first).
        case lost
        /// The connection changed during the refresh (`unpair()`, a new pairing): nothing was written.
        case discarded
    }

    let core: Core
    let client: OAuthClient
    let margin: TimeInterval
    /// The token being replaced: the one the server rejected, or the one about to expire.
    let replacing: String?
    /// The connection this refresh belongs to.
    let generation: UInt64
    /// Set when the storm guard is closed: adopting is still fine, a new request is not.
    let limit: AuthFailure?
    /// Set for the one more try with a pair another process stored while this one's was refused.
    var retriedAfterNewerPair = false

    /// Runs while the lock is held, the token request included (awaited, so no thread waits for it).
    func run(_ access: LockedState) async throws -> Outcome {
        let store = core.store
        let state = try await access.read()
        guard store.generation == generation else { return .discarded }
        guard state.hasTokens else { return .lost }
        if let current = state.freshAccessToken(now: core.clock(), margin: margin), current != replacing {
            return .adopted(current)
        }
        if let limit { throw limit }
        guard let refreshToken = state.refreshToken else {
            // An access token that can no longer be renewed: the connection is over.
            try await forget(state, access)
            return .lost
        }
        let form = client.form(["grant_type": "refresh_token", "refresh_token": refreshToken])
        let endpoint = OAuthEndpoint(core: core)
        let basicAuth = client.basicAuth
        let response: TokenResponse
        do {
            response = try await endpoint.token(form: form, basicAuth: basicAuth, retrying: true)
        } catch let error as ProfirestOAuthError where error.error == "invalid_grant" {
            // Re-checked after the wait: an unpair() or a new pairing meanwhile owns the state now.
            guard store.generation == generation else { return .discarded }
            // Before forgetting anything, look again: another process (or a storage without a lock) may have
            // stored a newer pair since this refresh token was read.
            let now = try await access.read()
            if now.hasTokens, now.refreshToken != refreshToken {
                if let fresh = now.freshAccessToken(now: core.clock(), margin: margin) { return .adopted(fresh) }
                if !retriedAfterNewerPair {
                    var again = self
                    again.retriedAfterNewerPair = true
                    return try await again.run(access)
                }
            }
            try await forget(now, access)
            return .lost
        }
        // invalid_client, unauthorized_client and network failures were thrown above with the tokens kept:
        // they are temporary for a device.
        guard store.generation == generation else { return .discarded }
        var next = state
        // A refresh asks for no scope: an answer without one keeps the scopes granted before (RFC 6749 6).
        next.apply(response, requestedScope: nil, now: core.clock())
        do {
            try await access.write(next)
        } catch is StorageError {
            // The server has replaced the refresh token: the new pair is kept in memory and used (the store writes
            // it again until it can, and tells the observer), and the request that needed it goes on.
        }
        return .refreshed(response.accessToken)
    }

    /// The connection is over on the server: forgotten here too, in memory at least when the storage refuses.
    private func forget(_ state: StoredState, _ access: LockedState) async throws {
        var next = state
        next.forgetConnection()
        do {
            try await access.write(next)
        } catch is StorageError {
            // Kept in memory and written again by the store; the grant is gone either way.
        }
    }
}
