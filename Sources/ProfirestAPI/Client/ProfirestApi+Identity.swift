import Foundation

// Pairing (RFC 8628), partner consent (code + PKCE), the connection's state and unpairing: the flows of Auth/
// (`Pairing`, `PartnerAuthorization`, `Identity.unpair`) on the client's core, whose state store keeps the
// connection in the `storage` under `storageKey`.

extension ProfirestApi {
    // MARK: State

    /// True when requests can be authorized: stored tokens, or a fixed `accessToken`. Synchronous.
    ///
    /// False only when the storage was read and holds no tokens. While it cannot be read (a keychain locked at a
    /// background launch) this stays true, requests fail with the ``StorageError``, ``storageError`` tells why, and
    /// `pair()` refuses to start over a pairing it cannot see.
    ///
    /// ```swift
    /// if !api.isPaired { try await pairDevice() }
    /// ```
    public var isPaired: Bool { identity.isPaired(core.store) }

    /// Why the connection's storage is not in step right now, nil when it is: it could not be read (every request
    /// then fails with this error, and the storage is read again on the next one), or the newest state — tokens the
    /// server issued, an event cursor — could not be written. Such state is kept in memory, used by every request,
    /// and written again at each change and every 30 s at most until the storage takes it.
    ///
    /// ```swift
    /// if let problem = api.storageError { status = "Storage: \(problem.reason)" }
    /// ```
    public var storageError: StorageError? { core.store.problem }

    /// The paired device's restaurant; nil for a partner connection, or until `connection()` told it.
    ///
    /// ```swift
    /// guard let rid = api.restaurantID else { return }
    /// ```
    public var restaurantID: String? { core.store.snapshot.restaurantID }

    /// The paired device's id, e.g. `dev_7Q2M`.
    ///
    /// ```swift
    /// print(api.deviceID ?? "-")
    /// ```
    public var deviceID: String? { core.store.snapshot.deviceID }

    /// The granted scopes.
    ///
    /// ```swift
    /// api.scopes.contains("attendance:punch")
    /// ```
    public var scopes: [String] { core.store.snapshot.scopes }

    // MARK: Pairing a device (RFC 8628)

    /// Starts pairing this device: show `userCode`, then `try await pairing.connected()`. Needs `clientID`
    /// (else `ProfirestUsageError`); `devicePlatform` defaults to the platform this runs on.
    ///
    /// - Parameters:
    ///   - scope: what the device will do, as scopes separated by spaces (`kitchen:read orders:write`); the manager
    ///     sees the list.
    ///   - deviceName: the name the manager sees, such as `Kitchen 1`; nil sends none.
    ///   - devicePlatform: `ios`, `macos`, `linux`…; nil sends the platform this runs on.
    ///   - appVersion: your app's version, shown with the device; nil sends none.
    /// - Returns: the pairing in progress: show its `userCode` and `verificationURI`, then wait with `connected()`.
    /// - Throws: ``ProfirestUsageError`` without a `clientID` or with an unusable `baseURL` (nothing is sent);
    ///   ``ProfirestOAuthError`` when the server refuses to start (such as `invalid_scope`); ``ProfirestAPIError`` when
    ///   no answer comes (`network_error`, `timeout`) or the server fails; ``StorageError`` when the storage cannot
    ///   be read (it may hold a pairing, so none is started over it); `CancellationError` when the task is cancelled.
    ///
    /// ```swift
    /// let pairing = try await api.pair(scope: "kitchen:read", deviceName: "KDS", appVersion: "2.3.0")
    /// ```
    public func pair(
        scope: String, deviceName: String? = nil, devicePlatform: String? = nil, appVersion: String? = nil
    ) async throws -> Pairing {
        _ = try core.base.get()
        // A storage that cannot be read may hold a pairing: never start over one unseen.
        if case .failure(let error) = core.store.known { throw error }
        return try await Pairing.start(
            scope: scope, deviceName: deviceName, devicePlatform: devicePlatform, appVersion: appVersion, core: core)
    }

    /// Continues a pairing from its saved `pairing.state` (e.g. after the app was terminated).
    ///
    /// - Parameter state: the ``Pairing/state`` you saved, decoded.
    /// - Returns: the pairing, ready for `connected()`; it goes on waiting for the same code.
    /// - Throws: ``ProfirestUsageError`` without a `clientID` or with an unusable `baseURL`.
    ///
    /// ```swift
    /// let pairing = try api.resumePairing(savedState)
    /// ```
    public func resumePairing(_ state: PairingState) throws -> Pairing {
        _ = try core.base.get()
        return try Pairing.resume(state, core: core)
    }

    /// `GET /v2/connection`; remembers the device's restaurant, device id and scopes for the synchronous readers.
    ///
    /// ```swift
    /// if api.restaurantID == nil { _ = try? await api.connection() }
    /// ```
    @discardableResult
    public func connection() async throws -> Connection {
        let connection: Connection = try await get("/connection")
        try await identity.remember(connection, store: core.store)
        return connection
    }

    /// Forgets the pairing here (tokens, restaurant, device, a consent in progress; event cursors stay), ends the
    /// staff session, and revokes the refresh token on the server in one attempt — kept in the storage to revoke
    /// later when that fails (`.revocationFailed` tells the observer), so it returns promptly offline too. Grants left pending by earlier failures are tried again. `onUnpaired` is not called:
    /// you asked for it. To learn whether the server ended the grant, use ``disconnect()``.
    ///
    /// ```swift
    /// await api.unpair()
    /// ```
    public func unpair() async {
        // Non-throwing as the reference shows it: the local state is cleared either way, a failed revocation stays
        // pending, and a storage that cannot be written surfaces with its error on the next read of the state.
        try? await identity.unpair(core: core, revoke: true, retrying: false)
    }

    /// The same as ``unpair()``, but waits out the retry table for the revocation and throws when the grant could not
    /// be revoked on the server, for a partner's Disconnect button that must tell the owner the truth.
    ///
    /// The local state is cleared either way; a refresh token the server did not confirm revoked stays pending in
    /// the storage and is tried again by the next `unpair()`, `disconnect()`, pairing or consent. Throws the
    /// revocation's `ProfirestAPIError` (e.g. `network_error`, or a 503 after the retries) or `ProfirestOAuthError`
    /// (e.g. `invalid_client`) — also for a grant left pending by an earlier failure — and a `StorageError` when the
    /// state cannot be written (then nothing was cleared).
    ///
    /// ```swift
    /// do { try await api.disconnect() } catch { showStillConnectedOnTheServer(error) }
    /// ```
    public func disconnect() async throws {
        try await identity.unpair(core: core, revoke: true)
    }

    // MARK: Partner consent (authorization code + PKCE S256, RFC 9207)

    /// The consent page's address; the PKCE verifier and state wait in the storage until the callback.
    ///
    /// - Parameters:
    ///   - redirectURI: the redirect URI registered for your client, where the browser comes back with the answer.
    ///   - scope: what your application asks the owner for, as scopes separated by spaces.
    ///   - prompt: `consent` to ask the owner again although they agreed before (`login` and `none` as the reference
    ///     gives them); nil sends none.
    /// - Returns: the address of the consent page, to open in the owner's browser.
    /// - Throws: ``ProfirestUsageError`` without a `clientID`, with an empty `redirectURI` or an unusable `baseURL`;
    ///   ``StorageError`` when the consent in progress cannot be stored.
    ///
    /// ```swift
    /// let url = try api.authorizationURL(redirectURI: "mojeaplikace://profirest", scope: "orders:read")
    /// ```
    public func authorizationURL(redirectURI: String, scope: String, prompt: String? = nil) throws -> URL {
        _ = try core.base.get()
        return try PartnerAuthorization(core: core).authorizationURL(redirectURI: redirectURI, scope: scope, prompt: prompt)
    }

    /// Finishes the consent from the callback URL: checks `state` and `iss`, exchanges the code for tokens, and
    /// answers with the new connection.
    ///
    /// - Parameter callbackURL: the URL the browser was sent back to, with its query (or fragment) as it came.
    /// - Returns: the new connection (`GET /v2/connection`): the restaurants and scopes the owner granted.
    /// - Throws: ``ProfirestOAuthError`` when the owner said no (`access_denied`) or the callback is refused
    ///   (`invalid_state`, `invalid_issuer`, `invalid_grant`); ``ProfirestAPIError`` when no answer comes
    ///   (`network_error`, `timeout`: the consent stays in place, so the same callback can be completed again) or the
    ///   server fails; ``ProfirestUsageError`` without a `clientID`; ``StorageError`` when the stored state cannot be
    ///   read or written; `CancellationError` when the task is cancelled.
    ///
    /// ```swift
    /// let connection = try await api.completeAuthorization(callbackURL)
    /// ```
    @discardableResult
    public func completeAuthorization(_ callbackURL: URL) async throws -> Connection {
        _ = try core.base.get()
        try await PartnerAuthorization(core: core).completeAuthorization(callbackURL)
        return try await connection()
    }

    /// Finishes the consent from the callback's parameters (`code`, `state`, `iss` or `error`), e.g. on a server.
    ///
    /// - Parameter parameters: the callback's query parameters, decoded: `code`, `state` and `iss`, or `error`.
    /// - Returns: the new connection (`GET /v2/connection`): the restaurants and scopes the owner granted.
    /// - Throws: ``ProfirestOAuthError`` when the owner said no (`access_denied`) or the callback is refused
    ///   (`invalid_state`, `invalid_issuer`, `invalid_grant`); ``ProfirestAPIError`` when no answer comes
    ///   (`network_error`, `timeout`: the consent stays in place, so the same callback can be completed again) or the
    ///   server fails; ``ProfirestUsageError`` without a `clientID`; ``StorageError`` when the stored state cannot be
    ///   read or written; `CancellationError` when the task is cancelled.
    ///
    /// ```swift
    /// try await api.completeAuthorization(parameters: ["code": c, "state": s, "iss": i])
    /// ```
    @discardableResult
    public func completeAuthorization(parameters: [String: String]) async throws -> Connection {
        _ = try core.base.get()
        try await PartnerAuthorization(core: core).completeAuthorization(parameters: parameters)
        return try await connection()
    }
}
