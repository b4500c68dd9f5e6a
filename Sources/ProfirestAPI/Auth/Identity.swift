import Foundation

/// Who the client's requests are made as: the device's or partner's tokens (stored, refreshed by `TokenRefresher`,
/// or a fixed `accessToken`) and the employee signed in on the register (`StaffSessions`, in memory only). The core
/// asks it for the tokens of each attempt (`RequestAuthorizer`).
///
/// It also turns the token layer's failures into the errors a request throws, so that every API call fails with a
/// `ProfirestAPIError` whose `code` the app can switch on:
///
/// | token failure                            | request error |
/// |------------------------------------------|---------------|
/// | `AuthFailure.notPaired`                  | `not_paired` (401) |
/// | `AuthFailure.refreshLimit`               | `invalid_token` (401), not retryable, `retryAfter` = seconds until the guard reopens |
/// | `ProfirestOAuthError` from a refresh      | `invalid_token` (401), the OAuth code in the detail (tokens kept: `invalid_client` is temporary) |
/// | usage, storage and transport errors      | unchanged |
///
/// The pairing and consent flows (`Pairing`, `PartnerAuthorization`) work on the core directly; what they share with
/// this object is the state store.
final class Identity: RequestAuthorizer {
    let refresher: TokenRefresher
    let staffSessions: StaffSessions
    /// A fixed token (the `accessToken` option): sent as it is, never refreshed.
    let fixedAccessToken: String?

    /// - Parameters:
    ///   - onUnpaired: told once when a refresh finds the connection gone (`invalid_grant`), with the error requests
    ///     throw then; the observer hears of it first.
    ///   - clock, sleep: the client's, for the staff session's expiry timer.
    init(
        fixedAccessToken: String? = nil, refreshMargin: TimeInterval = 60,
        onUnpaired: (@Sendable (ProfirestAPIError) -> Void)? = nil, onStaffExpired: (@Sendable (StaffInfo) -> Void)? = nil,
        observe: (@Sendable (ProfirestEvent) -> Void)? = nil,
        clock: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = RealTime.sleep,
        changes: ChangeSignal = ChangeSignal()
    ) {
        self.fixedAccessToken = fixedAccessToken
        var lost: (@Sendable (Core) -> Void)?
        if onUnpaired != nil || observe != nil {
            // The observer hears of the loss first, then the app's handler gets the error requests throw now.
            lost = { core in
                observe?(.unpaired(reason: "invalid_grant"))
                onUnpaired?(Identity.notPaired(core.errors()))
            }
        }
        refresher = TokenRefresher(refreshMargin: refreshMargin, onUnpaired: lost)
        var expired = onStaffExpired
        if let observe {
            // The observer hears of the end as well, before the app's own handler.
            expired = { info in
                observe(.staffSessionEnded(employeeID: info.employeeID, expired: true))
                onStaffExpired?(info)
            }
        }
        staffSessions = StaffSessions(clock: clock, sleep: sleep, onStaffExpired: expired, changes: changes)
    }

    // MARK: RequestAuthorizer

    func accessToken(core: Core) async throws -> String? {
        if let fixedAccessToken { return fixedAccessToken }
        // Nearly every call: a fresh token from the store's lock-protected snapshot, without a hop onto the actor.
        if let token = core.store.snapshot.freshAccessToken(now: core.clock(), margin: refresher.refreshMargin) {
            return token
        }
        do {
            return try await refresher.accessToken(core: core)
        } catch AuthFailure.notPaired where OAuthClient.of(core) == nil {
            // A client without a clientID can never pair, so "pair again" would be no advice: it is an anonymous
            // client (public endpoints, a proxy that authenticates, the benchmarks) and sends no Authorization.
            return nil
        } catch {
            throw Self.requestError(error, core: core)
        }
    }

    func refresh(afterRejecting token: String, core: Core) async throws -> String? {
        // A fixed token has nothing to be renewed with: the 401 stands.
        if fixedAccessToken != nil { return nil }
        do {
            return try await refresher.refresh(afterRejecting: token, core: core)
        } catch {
            throw Self.requestError(error, core: core)
        }
    }

    func staffToken(now: Date) -> String? { staffSessions.staffToken(now: now) }
    func staffRequestSucceeded(token: String, now: Date) { staffSessions.touch(token: token, now: now) }
    func staffRejected(token: String) { staffSessions.rejected(token: token) }

    /// The `not_paired` error: thrown by requests, and passed to `onUnpaired`.
    static func notPaired(_ errors: ErrorFactory) -> ProfirestAPIError {
        errors.make(ErrorCode.notPaired, detail: AuthFailure.notPaired.description)
    }

    /// A failure of the token layer as the error the request throws (see the table above).
    static func requestError(_ error: Error, core: Core) -> Error {
        switch error {
        case AuthFailure.notPaired:
            return notPaired(core.errors())
        case AuthFailure.refreshLimit(_, _, let retryAfter):
            // Not retryable: the library must not turn a refresh storm into a retry storm.
            return core.errors().make(
                ErrorCode.invalidToken, status: 401, detail: String(describing: error), retryAfter: retryAfter)
        case let oauth as ProfirestOAuthError:
            return core.errors().make(
                ErrorCode.invalidToken, status: 401,
                detail: "the access token could not be renewed: the token endpoint answered \(oauth.error) "
                    + "(\(oauth.message)); the stored tokens are kept")
        default:
            return error
        }
    }

    // MARK: The connection and the staff session

    /// True with a fixed access token or stored tokens.
    func isPaired(_ store: StateStore) -> Bool {
        if fixedAccessToken != nil { return true }
        switch store.known {
        case .success(let state): return state.hasTokens
        // Unknown is not unpaired: an app that pairs when this is false must not start over tokens it cannot see.
        case .failure: return true
        }
    }

    /// After `GET /v2/connection`: remembers the device's restaurant, device id and scopes (so `restaurantID` is
    /// known after a pairing whose token answer did not carry it). Ignored once the tokens are gone, so a late
    /// answer cannot make an unpaired client look paired again.
    func remember(_ connection: Connection, store: StateStore) async throws {
        do {
            try await store.updateKeeping { state in
                guard state.hasTokens else { return }
                if let restaurant = connection.restaurantId { state.restaurantID = restaurant }
                if let device = connection.device?.id { state.deviceID = device }
                if !connection.scopes.isEmpty { state.scopes = connection.scopes }
            }
        } catch is StorageError {
            // Kept in memory and written again by the store (the observer hears of it): the server's answer is
            // the caller's all the same.
        }
    }

    /// `api.unpair()` and `api.disconnect()`: ends the staff session and forgets the connection (event cursors
    /// stay), then with `revoke` ends its grant on the server, with retries, and any grant left pending from before.
    /// Throws the revocation's failure (the token then stays pending) — or the storage's, before anything changed.
    /// Without `retrying`, one attempt: `unpair()` must return promptly offline (a device's "forget the pairing"),
    /// while `disconnect()` waits out the retry table to tell the caller the truth.
    func unpair(core: Core, revoke: Bool = true, retrying: Bool = true) async throws {
        staffSessions.end()
        let parked = try await refresher.unpair(revoke: revoke, core: core)
        core.observe?(.unpaired(reason: "requested"))
        guard revoke, let client = OAuthClient.of(core) else { return }
        let revocation = GrantRevocation(core: core, client: client)
        if let failure = await revocation.revokePending(current: parked, retrying: retrying) { throw failure }
    }

    /// After `POST /v2/restaurants/{id}/staff/sessions` answered 201: keeps the session and starts the timer that
    /// reports its end on the client's clock.
    @discardableResult
    func staffSignedIn(_ session: StaffSession, core: Core) -> StaffInfo {
        core.observe?(.staffSignedIn(employeeID: session.employee.id))
        // max_expires_at is the server's time: counted from the server's clock as the sign-in's answer told it.
        return staffSessions.begin(session, now: core.clock(), serverOffset: core.serverClock.offset ?? 0)
    }

    /// For `api.signOutStaff(token:)`: forgets the session (the one of `token`, or the current one) and returns
    /// the token to end on the server with `DELETE /v2/staff/sessions/current` (nil when nobody was signed in).
    func signOutStaff(token: String?, core: Core) -> String? {
        if let token {
            staffSessions.end(token: token)
            return token
        }
        let employee = staffSessions.currentInfo
        let ended = staffSessions.end()
        if let employee, ended != nil {
            core.observe?(.staffSessionEnded(employeeID: employee.employeeID, expired: false))
        }
        return ended
    }
}

extension Identity: CustomReflectable {
    var customMirror: Mirror {
        Mirror(self, children: ["fixedAccessToken": fixedAccessToken != nil, "staff": staffSessions])
    }
}
