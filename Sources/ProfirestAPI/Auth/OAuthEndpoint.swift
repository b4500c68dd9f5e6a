import Foundation

/// The authorization server's endpoints (RFC 6749, 7009, 8414, 8628), sent through the client's `Core`.
///
/// `/oauth/*` and `/.well-known/*` go to the root of `baseURL` (never to another origin, and over plain http only
/// to a loopback sandbox: every form here carries a secret). An OAuth error body (RFC 6749 5.2) becomes
/// `ProfirestOAuthError`; a proxy's login `proxy_authentication_required`; every other failure the catalog's
/// `ProfirestAPIError` (`network_error`, `timeout`, a problem+json, `unexpected_redirect`).
///
/// Which of these calls are sent again is their `SendPolicy`'s: a refresh after 1 s and 2 s (`tokenRequest`), a
/// revocation by the retry table (`GrantRevocation`); the pairing loop waits out outages itself, and an
/// authorization code (partner consent) is sent once per `completeAuthorization` — after a network failure the
/// consent stays pending, and the app may complete the same callback again.
struct OAuthEndpoint: Sendable {
    let core: Core

    /// Form members whose values are secrets, blanked in any error text the server echoes them in.
    private static let secretFields = ["refresh_token", "device_code", "code", "code_verifier", "token"]

    /// `POST /oauth/token`; `retrying` sends a refresh again after a failure on the way (see `SendPolicy.tokenRequest`).
    /// The answer's optional members are read by `StoredState.apply`; its `token_type` must be Bearer in any letter
    /// case (RFC 6749 5.1), since a token of another type would be sent the wrong way (RFC 6749 7.1).
    func token(form: [String: String], basicAuth: String?, retrying: Bool = false) async throws -> TokenResponse {
        let secrets = Self.secrets(form, basicAuth)
        let reads = Self.reader(path: "/oauth/token", hasForm: true)
        let policy = retrying
            ? SendPolicy.tokenRequest(secrets: secrets, reads: reads) : .oauthOnce(secrets: secrets, reads: reads)
        let response = try await send("POST", "/oauth/token", form: form, basicAuth: basicAuth, policy: policy)
        let tokens = try ResponseDecoding.decode(TokenResponse.self, from: response, errors: core.errors(scrubbing: secrets))
        guard tokens.tokenType.lowercased() == "bearer" else {
            let issued = [tokens.accessToken, tokens.refreshToken].compactMap { $0 }
            throw core.errors(scrubbing: secrets + issued).make(
                ErrorCode.invalidResponse, status: response.status,
                detail: "the token endpoint issued a token of type \"\(tokens.tokenType)\"; only Bearer tokens "
                    + "(RFC 6750) can be sent, so none was stored",
                requestID: response.header("Profirest-Request-Id"))
        }
        return tokens
    }

    /// `POST /oauth/device_authorization` (RFC 8628 3.1), once. `verification_uri_complete` and `interval` may be
    /// absent (RFC 8628 3.2): `Pairing.start` falls back to `verification_uri` and 5 s.
    func deviceAuthorization(form: [String: String]) async throws -> DeviceAuthorization {
        let secrets = Self.secrets(form, nil)
        let policy = SendPolicy.oauthOnce(secrets: secrets, reads: Self.reader(path: "/oauth/device_authorization", hasForm: true))
        let response = try await send("POST", "/oauth/device_authorization", form: form, basicAuth: nil, policy: policy)
        let answer = try ResponseDecoding.decode(
            DeviceAuthorization.self, from: response, errors: core.errors(scrubbing: secrets))
        // The manager signs in at this address: a page reached over plain http off this machine would expose the
        // manager's password and the code.
        let shown = [("verification_uri", answer.verificationUri)]
            + [("verification_uri_complete", answer.verificationUriComplete ?? "")].filter { !$0.1.isEmpty }
        for (member, address) in shown where URL(string: address).flatMap(Origin.init)?.mayCarrySecrets != true {
            throw core.errors().make(
                ErrorCode.invalidResponse, status: response.status,
                detail: "\(member) \"\(Origin.redactingUserInfo(address))\" is not an https address "
                    + "(plain http only to this machine); the pairing was not started")
        }
        return answer
    }

    /// `POST /oauth/revoke` (RFC 7009), sent again `retries` times after a retryable failure.
    func revoke(form: [String: String], basicAuth: String?, retries: Int) async throws {
        let policy = SendPolicy.revocation(
            retries: retries, secrets: Self.secrets(form, basicAuth), reads: Self.reader(path: "/oauth/revoke", hasForm: true))
        _ = try await send("POST", "/oauth/revoke", form: form, basicAuth: basicAuth, policy: policy)
    }

    /// `GET /.well-known/oauth-authorization-server` (RFC 8414), once.
    func metadata() async throws -> AuthorizationServerMetadata {
        let path = "/.well-known/oauth-authorization-server"
        let response = try await send("GET", path, form: nil, basicAuth: nil, policy: .oauthOnce(secrets: [], reads: Self.reader(path: path, hasForm: false)))
        return try ResponseDecoding.decode(AuthorizationServerMetadata.self, from: response, errors: core.errors())
    }

    private static func secrets(_ form: [String: String], _ basicAuth: String?) -> [String] {
        secretFields.compactMap { form[$0] } + [basicAuth].compactMap { $0 }
    }

    private func send(_ method: String, _ path: String, form: [String: String]?, basicAuth: String?, policy: SendPolicy)
        async throws -> APIResponse
    {
        let base = try core.base.get()
        guard base.origin.mayCarrySecrets else {
            throw ProfirestUsageError(
                "OAuth requests carry secrets and are never sent over plain http to \(base.origin.host); use https "
                    + "(or a loopback address such as http://127.0.0.1:8080 for the sandbox)")
        }
        guard let url = URL(string: base.root + path), let origin = Origin(url) else {
            throw ProfirestUsageError("baseURL \"\(base.root)\" does not make a valid OAuth URL")
        }
        var headers = OutgoingRequest.standardHeaders(accept: "application/json", language: core.language)
        if let basicAuth { headers["Authorization"] = basicAuth }
        var body: Data?
        if let form {
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            body = Data(PercentEncoding.formBody(form).utf8)
        }
        // Only the token refresh and the revocation are ever sent again (their policies): a refresh replayed within
        // the server's grace window gets the same new tokens, and revoking a revoked token changes nothing (RFC 7009).
        let request = OutgoingRequest(
            method: method, target: RequestTarget(url: url, isAPIOrigin: true, origin: origin), headers: headers, body: body,
            knownSafeToRepeat: true)
        let response = try await core.send(request, policy: policy)
        if response.status == 304 {
            // Not an answer an OAuth endpoint gives: read it as the failure it is.
            throw policy.readsErrorAnswer?(response, core.errors(scrubbing: policy.secrets))
                ?? core.errors(scrubbing: policy.secrets).fromResponse(
                    response, now: ServerClock.date(in: response.headers, deviceNow: core.clock()) ?? core.clock())
        }
        return response
    }

    /// Reads an error answer of the authorization server: an OAuth error body (whatever its challenge says), a
    /// proxy's login, or a bodiless 401 to a form (the client's own authentication failed, RFC 6749 5.2); nil leaves
    /// it to the catalog.
    private static func reader(path: String, hasForm: Bool) -> @Sendable (APIResponse, ErrorFactory) -> (any Error)? {
        { response, errors in
            if let oauth = oauthError(in: response, redaction: errors.redaction) { return oauth }
            if let proxy = ProxyChallenge(response), !isAuthorizationServers(proxy) {
                return errors.proxyLogin(proxy, status: response.status, requestID: response.header("Profirest-Request-Id"))
            }
            if response.status == 401, hasForm, response.data.isEmpty {
                // With a Basic challenge, Linux URLSession hands a 401 back without its body (see AuthChallenge).
                return ProfirestOAuthError(
                    error: "invalid_client", detail: "the server did not accept the client's credentials (HTTP 401 from \(path))")
            }
            return nil
        }
    }

    /// The authorization server's own challenge to a client that authenticates with a secret (RFC 6749 2.3.1) is
    /// `Basic realm="profirest"` (the contract says so). It tells the server's bodiless 401 — Linux URLSession drops
    /// the body of a challenged 401 — from a proxy's, whose realm is its own.
    static func isAuthorizationServers(_ challenge: ProxyChallenge) -> Bool {
        challenge.scheme.lowercased() == "basic" && challenge.realm == "profirest"
    }

    /// `{"error": "...", "error_description": "..."}`; nil for any other body (a problem+json, an HTML page).
    static func oauthError(in response: APIResponse, redaction: Redaction) -> ProfirestOAuthError? {
        guard let body = ErrorFactory.problem(in: response), body["code"] == nil,
            let error = body["error"]?.stringValue, !error.isEmpty
        else { return nil }
        return ProfirestOAuthError(error: error, detail: body["error_description"]?.stringValue.map(redaction.scrub))
    }
}

/// The client as the authorization server knows it: its client_id, and its secret when it is a confidential one.
struct OAuthClient: Sendable {
    let clientID: String
    let clientSecret: String?

    /// The client of `core`, or a usage error naming the call that needs a client_id.
    static func of(_ core: Core, for call: String) throws -> OAuthClient {
        guard let client = of(core) else {
            throw ProfirestUsageError(
                "\(call) needs a clientID: create the client with ProfirestApi.Options(clientID: \"profirest-pos\", …) "
                    + "using the client_id of your application (profirest-pos, profirest-kds, profirest-dochazka, "
                    + "profirest-kuryr, or the one Profirest assigned to your partner application).")
        }
        return client
    }

    /// The client of `core`; nil without a client_id.
    static func of(_ core: Core) -> OAuthClient? {
        guard let clientID = core.clientID, !clientID.isEmpty else { return nil }
        return OAuthClient(clientID: clientID, clientSecret: core.clientSecret)
    }

    /// HTTP Basic for a confidential client (RFC 6749 2.3.1: both parts form-encoded first); nil for a public one.
    var basicAuth: String? {
        guard let clientSecret else { return nil }
        let pair = PercentEncoding.form(clientID) + ":" + PercentEncoding.form(clientSecret)
        return "Basic " + Data(pair.utf8).base64EncodedString()
    }

    /// The form with `client_id` for a public client (a confidential one names itself in `Authorization`).
    func form(_ fields: [String: String]) -> [String: String] {
        var form = fields
        if clientSecret == nil { form["client_id"] = clientID }
        return form
    }
}

extension OAuthClient: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String { "OAuthClient(clientID: \(clientID), confidential: \(clientSecret != nil))" }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: ["summary": description]) }
}
