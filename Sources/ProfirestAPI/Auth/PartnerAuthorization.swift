import Foundation

/// A partner application's connection with the restaurant owner's consent: authorization code + PKCE S256,
/// with the callback checked by `state` and `iss` (RFC 9207) before the code is exchanged.
///
/// The verifier and state wait in the storage between the redirect and the callback (`pending_consent`), so a
/// server can finish the consent in another process, and a device app after it was relaunched. One storage key
/// holds one consent in progress and one connection: a new `authorizationURL` replaces the previous consent.
struct PartnerAuthorization: Sendable {
    let core: Core

    /// How long a consent waits for its callback, by the client's clock: an owner takes minutes, and a verifier and
    /// state left in the storage for longer are more likely a forgotten attempt than a consent still under way.
    static let consentLifetime: TimeInterval = 30 * 60

    /// Builds `<baseURL>/oauth/authorize?…` and remembers the consent it starts.
    func authorizationURL(redirectURI: String, scope: String, prompt: String? = nil) throws -> URL {
        let client = try OAuthClient.of(core, for: "authorizationURL(redirectURI:scope:prompt:)")
        guard !redirectURI.isEmpty else {
            throw ProfirestUsageError(
                "authorizationURL needs the redirectURI registered for your client, e.g. \"myapp://profirest\".")
        }
        let pkce = PKCE.make()
        let state = PKCE.makeState()
        var query: [(String, String)] = [
            ("response_type", "code"), ("client_id", client.clientID), ("redirect_uri", redirectURI),
            ("scope", scope), ("state", state), ("code_challenge", pkce.challenge),
            ("code_challenge_method", PKCE.method),
        ]
        if let prompt, !prompt.isEmpty { query.append(("prompt", prompt)) }
        let encoded = query.map { PercentEncoding.rfc3986($0.0) + "=" + PercentEncoding.rfc3986($0.1) }
        let apiBase = try core.base.get()
        // The owner signs in on that page, and the code comes back to the app from it.
        guard apiBase.origin.mayCarrySecrets else {
            throw ProfirestUsageError(
                "the consent page would be opened over plain http at \(apiBase.origin.host); use https "
                    + "(or a loopback address such as http://127.0.0.1:8080 for the sandbox)")
        }
        let base = apiBase.root
        guard let url = URL(string: base + "/oauth/authorize?" + encoded.joined(separator: "&")) else {
            throw ProfirestUsageError("baseURL \"\(base)\" does not make a valid authorization URL; pass an https address.")
        }
        let consent = PendingConsent(
            state: state, codeVerifier: pkce.verifier, redirectURI: redirectURI, scope: scope,
            createdAt: core.clock())
        try core.store.update { $0.pendingConsent = consent }
        return url
    }

    /// The callback URL the browser was sent to (its query, or a fragment if the query is empty).
    func completeAuthorization(_ url: URL) async throws {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var items = components?.percentEncodedQueryItems ?? []
        if items.isEmpty, let fragment = components?.percentEncodedFragment {
            items = URLComponents(string: "?" + fragment)?.percentEncodedQueryItems ?? []
        }
        var parameters: [String: String] = [:]
        for item in items {
            // Form decoding: `+` is a space in a query written by a form encoder.
            let value = (item.value ?? "").replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            parameters[item.name.removingPercentEncoding ?? item.name] = value
        }
        try await completeAuthorization(parameters: parameters)
    }

    /// The callback's parameters (`code`, `state`, `iss`, or `error`), e.g. from a server route.
    func completeAuthorization(parameters: [String: String]) async throws {
        let client = try OAuthClient.of(core, for: "completeAuthorization")
        if let state = parameters["state"], core.store.unsavedConnection(from: state) {
            // This consent was completed and its tokens are held in memory: store them now (or say why not).
            try await core.store.saveUnsaved()
            core.observe?(.paired)
            return
        }
        guard let pending = try core.store.read().pendingConsent else {
            throw ProfirestOAuthError(
                error: "invalid_state",
                detail: "No consent is in progress under this storage key; call authorizationURL first, "
                    + "with the same storage key as here.")
        }
        if core.clock().timeIntervalSince(pending.createdAt) > Self.consentLifetime {
            try await clearPending()
            throw ProfirestOAuthError(
                error: "invalid_state",
                detail: "The consent in progress has expired (started more than 30 minutes ago); "
                    + "call authorizationURL again.")
        }
        guard let state = parameters["state"], Self.constantTimeEqual(state, pending.state) else {
            // Not our callback (forged, or for another consent): keep ours waiting for the real one.
            throw ProfirestOAuthError(
                error: "invalid_state", detail: "The callback's state does not match the consent in progress.")
        }
        let metadata = try await OAuthEndpoint(core: core).metadata()
        if let iss = parameters["iss"] {
            guard iss == metadata.issuer else {
                try await clearPending()
                throw ProfirestOAuthError(
                    error: "invalid_issuer",
                    detail: "The callback comes from the issuer \(iss), not \(metadata.issuer).")
            }
        } else if metadata.authorizationResponseIssParameterSupported {
            try await clearPending()
            throw ProfirestOAuthError(
                error: "invalid_issuer", detail: "The callback carries no iss, which this server always sends.")
        }
        if let error = parameters["error"] {
            try await clearPending()
            throw ProfirestOAuthError(error: error, detail: parameters["error_description"])
        }
        guard let code = parameters["code"], !code.isEmpty else {
            throw ProfirestOAuthError(error: "invalid_request", detail: "The callback carries neither code nor error.")
        }
        let form = client.form([
            "grant_type": "authorization_code", "code": code, "redirect_uri": pending.redirectURI,
            "code_verifier": pending.codeVerifier,
        ])
        let response: TokenResponse
        do {
            response = try await OAuthEndpoint(core: core).token(form: form, basicAuth: client.basicAuth)
        } catch let error as ProfirestOAuthError {
            // The code is single-use and now spent: this consent is over.
            try await clearPending()
            throw error
        }
        // A network failure above leaves the consent in place, so the same callback can be completed again.
        let clock = core.clock
        // When the storage refuses, the connection is still this process's (held in memory) and the StorageError
        // says so; completing the same callback again writes it instead of spending the code twice. A token answer
        // without scope granted the scope the consent asked for (RFC 6749 5.1).
        let replaced = try await core.store.replaceConnection(from: pending.state) {
            $0.replaceConnection(with: response, requestedScope: pending.scope, now: clock())
        }
        core.observe?(.paired)
        // Connecting again replaced a grant (say, with fewer restaurants): end the old one on the server, best effort.
        _ = await GrantRevocation(core: core, client: client).revokePending(current: replaced)
    }

    private func clearPending() async throws {
        try await core.store.updateAsync { $0.pendingConsent = nil }
    }

    /// Compares without an early exit, so the time taken does not reveal how much of a guess was right.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<x.count { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
