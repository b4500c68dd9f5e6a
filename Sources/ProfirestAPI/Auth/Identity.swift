import Foundation

/// Everything the facade needs from the identity layer, behind one object: the synchronous state readers, the
/// pairing and consent flows, unpairing and the staff session.
///
/// The facade creates one per client from its options and forwards to it. The request pipeline does not come
/// through here: its `IdentityAuthorizer` asks the `TokenRefresher` and `StaffSessions` directly. Network access
/// goes through the `OAuthEndpoint` the facade adapts to its transport.
final class Identity: Sendable {
    let context: IdentityContext
    let refresher: TokenRefresher
    let staffSessions: StaffSessions
    let fixedAccessToken: String?

    init(
        context: IdentityContext, fixedAccessToken: String? = nil, refreshMargin: TimeInterval = 60,
        onUnpaired: (@Sendable () -> Void)? = nil, onStaffExpired: (@Sendable (StaffInfo) -> Void)? = nil
    ) {
        self.context = context
        self.fixedAccessToken = fixedAccessToken
        let client = context.clientID.flatMap { $0.isEmpty ? nil : OAuthClient(clientID: $0, clientSecret: context.clientSecret) }
        refresher = TokenRefresher(
            store: context.store, endpoint: context.endpoint,
            settings: .init(client: client, fixedAccessToken: fixedAccessToken, refreshMargin: refreshMargin),
            clock: context.clock, sleep: context.sleep, onUnpaired: onUnpaired, observe: context.observe)
        staffSessions = StaffSessions(clock: context.clock, sleep: context.sleep, onStaffExpired: onStaffExpired)
    }

    // MARK: Synchronous state (api.isPaired, restaurantID, deviceID, scopes)

    /// True with a fixed access token or stored tokens.
    var isPaired: Bool { fixedAccessToken != nil || context.store.snapshot.hasTokens }
    var restaurantID: String? { context.store.snapshot.restaurantID }
    var deviceID: String? { context.store.snapshot.deviceID }
    var scopes: [String] { context.store.snapshot.scopes }

    // MARK: Pairing and consent

    /// `api.pair(scope:deviceName:devicePlatform:appVersion:)`.
    func pair(scope: String, deviceName: String?, devicePlatform: String?, appVersion: String?) async throws -> Pairing {
        try await Pairing.start(
            scope: scope, deviceName: deviceName, devicePlatform: devicePlatform, appVersion: appVersion,
            context: context)
    }

    /// `api.resumePairing(_:)`.
    func resumePairing(_ state: PairingState) throws -> Pairing {
        try Pairing.resume(state, context: context)
    }

    /// `api.authorizationURL(redirectURI:scope:prompt:)`.
    func authorizationURL(redirectURI: String, scope: String, prompt: String?) throws -> URL {
        try PartnerAuthorization(context: context).authorizationURL(redirectURI: redirectURI, scope: scope, prompt: prompt)
    }

    /// `api.completeAuthorization(_:)`: the facade then answers with `connection()`.
    func completeAuthorization(_ url: URL) async throws {
        try await PartnerAuthorization(context: context).completeAuthorization(url)
    }

    /// `api.completeAuthorization(parameters:)`: the facade then answers with `connection()`.
    func completeAuthorization(parameters: [String: String]) async throws {
        try await PartnerAuthorization(context: context).completeAuthorization(parameters: parameters)
    }

    /// After `GET /v2/connection`: remembers the device's restaurant, device id and scopes (so `restaurantID` is
    /// known after a pairing whose token answer did not carry it). Ignored once the tokens are gone, so a late
    /// answer cannot make an unpaired client look paired again.
    func remember(_ connection: Connection) async throws {
        try await context.store.updateAsync { state in
            guard state.hasTokens else { return }
            if let restaurant = connection.restaurantId { state.restaurantID = restaurant }
            if let device = connection.device?.id { state.deviceID = device }
            if !connection.scopes.isEmpty { state.scopes = connection.scopes }
        }
    }

    /// `api.unpair()` and `api.disconnect()`: ends the staff session and forgets the connection (event cursors
    /// stay), then with `revoke` ends its grant on the server, with retries, and any grant left pending from before.
    /// Throws the revocation's failure (the token then stays pending) — or the storage's, before anything changed.
    /// Without `retrying`, one attempt: `unpair()` must return promptly offline (a device's "forget the pairing"),
    /// while `disconnect()` waits out the retry table to tell the caller the truth.
    func unpair(revoke: Bool = true, retrying: Bool = true) async throws {
        staffSessions.end()
        let parked = try await refresher.unpair(revoke: revoke)
        context.observe?(.unpaired(reason: "requested"))
        guard revoke, let revocation else { return }
        if let failure = await revocation.revokePending(current: parked, retrying: retrying) { throw failure }
    }

    /// Revokes given-up grants; nil without a client_id, which a revocation needs.
    private var revocation: GrantRevocation? {
        guard let clientID = context.clientID, !clientID.isEmpty else { return nil }
        return GrantRevocation(context: context, client: OAuthClient(clientID: clientID, clientSecret: context.clientSecret))
    }

    // MARK: Staff (api.signInStaff, signOutStaff, staff)

    /// After `POST /v2/restaurants/{id}/staff/sessions` answered 201: keeps the session and starts the timer that
    /// reports its end on the client's clock.
    @discardableResult
    func staffSignedIn(_ session: StaffSession) -> StaffInfo {
        context.observe?(.staffSignedIn(employeeID: session.employee.id))
        return staffSessions.begin(session, now: context.clock())
    }

    /// For `api.signOutStaff(token:)`: forgets the session (the one of `token`, or the current one) and returns
    /// the token to end on the server with `DELETE /v2/staff/sessions/current` (nil when nobody was signed in).
    func signOutStaff(token: String?) -> String? {
        if let token {
            staffSessions.end(token: token)
            return token
        }
        let employee = staffSessions.currentInfo
        let ended = staffSessions.end()
        if let employee, ended != nil {
            context.observe?(.staffSessionEnded(employeeID: employee.employeeID, expired: false))
        }
        return ended
    }

    /// `api.staff`.
    var staff: StaffInfo? { staffSessions.info(now: context.clock()) }
}
