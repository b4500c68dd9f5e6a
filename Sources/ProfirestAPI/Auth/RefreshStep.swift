import Foundation

/// One refresh decision, made while the storage lock is held (see `StateStore.exclusive`), so that of several
/// processes sharing the storage only one spends the single-use refresh token and the others adopt its result.
struct RefreshStep: Sendable {
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

    let store: StateStore
    let endpoint: any OAuthEndpoint
    let client: OAuthClient
    let margin: TimeInterval
    let clock: @Sendable () -> Date
    /// The token being replaced: the one the server rejected, or the one about to expire.
    let replacing: String?
    /// The connection this refresh belongs to.
    let generation: UInt64
    /// Set when the storm guard is closed: adopting is still fine, a new request is not.
    let limit: AuthFailure?
    /// Waits before sending the refresh again after a retryable failure (network, timeout, 5xx, 429).
    let retryDelays: [TimeInterval]
    let sleep: @Sendable (TimeInterval) async throws -> Void

    static func isFresh(_ state: StoredState, now: Date, margin: TimeInterval) -> Bool {
        guard state.accessToken != nil else { return false }
        // No expiry known: nothing to anticipate, a 401 will tell us.
        guard let expiresAt = state.expiresAt else { return true }
        return now.addingTimeInterval(margin) < expiresAt
    }

    /// Runs on the thread holding the lock.
    func run(_ access: LockedState) throws -> Outcome {
        let state = try access.read()
        guard store.generation == generation else { return .discarded }
        guard state.hasTokens else { return .lost }
        if let current = state.accessToken, current != replacing,
            Self.isFresh(state, now: clock(), margin: margin)
        {
            return .adopted(current)
        }
        if let limit { throw limit }
        guard let refreshToken = state.refreshToken else {
            // An access token that can no longer be renewed: the connection is over.
            try forget(state, access)
            return .lost
        }
        let form = client.form(["grant_type": "refresh_token", "refresh_token": refreshToken])
        let endpoint = self.endpoint
        let basicAuth = client.basicAuth
        let (delays, sleep) = (retryDelays, self.sleep)
        let response: TokenResponse
        do {
            response = try access.wait {
                try await Self.requestTokens(endpoint, form: form, basicAuth: basicAuth, delays: delays, sleep: sleep)
            }
        } catch let error as ProfirestOAuthError where error.error == "invalid_grant" {
            // Re-checked after the wait: an unpair() or a new pairing meanwhile owns the state now.
            guard store.generation == generation else { return .discarded }
            try forget(state, access)
            return .lost
        }
        // invalid_client, unauthorized_client and network failures were thrown above with the tokens kept:
        // they are temporary for a device.
        guard store.generation == generation else { return .discarded }
        var next = state
        next.apply(response, now: clock())
        try access.write(next)
        return .refreshed(response.accessToken)
    }

    /// Sends the refresh, and again after a retryable failure. Safe although the refresh token is single-use: a
    /// failure may mean the server rotated it and the answer was lost, and the contract has the server answer a
    /// replay of the just-rotated token, within its grace window, with the same new tokens.
    static func requestTokens(
        _ endpoint: any OAuthEndpoint, form: [String: String], basicAuth: String?, delays: [TimeInterval],
        sleep: @Sendable (TimeInterval) async throws -> Void
    ) async throws -> TokenResponse {
        var retries = 0
        while true {
            do {
                return try await endpoint.token(form: form, basicAuth: basicAuth)
            } catch let error as ProfirestAPIError where error.retryable && retries < delays.count {
                try await sleep(delays[retries])
                retries += 1
            }
        }
    }

    private func forget(_ state: StoredState, _ access: LockedState) throws {
        var next = state
        next.forgetConnection()
        try access.write(next)
    }
}
