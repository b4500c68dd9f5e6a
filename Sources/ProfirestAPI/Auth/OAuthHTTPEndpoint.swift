import Foundation

/// The identity layer's `OAuthEndpoint` over the client's own `HTTPTransport`.
///
/// `/oauth/*` and `/.well-known/*` go to the root of `baseURL` (never to another origin, and over plain http only
/// to a loopback sandbox: every form here carries a secret). An OAuth error body (RFC 6749 5.2) becomes
/// `ProfirestOAuthError`; every other failure the pipeline's `ProfirestAPIError` (`network_error`, `timeout`,
/// a problem+json, `unexpected_redirect`).
///
/// One attempt per call: this type never retries, and each caller decides whether to send again.
/// - A refresh is sent again after a retryable failure (network_error, timeout, a 5xx, 429 rate_limited), after the
///   waits of `TokenRefresher.Settings.refreshRetryDelays` (1 s, then 2 s), by `RefreshStep.requestTokens`. That is
///   safe although the refresh token is single-use: when the server rotated it and the answer was lost, the contract
///   has it answer a replay of the just-rotated token (within 60 s, while its successor is unused) with the same new
///   tokens. When the retries are used up, the refresh fails only the request that needed it; the tokens are kept.
/// - A revocation is retried by the client's retry table (`GrantRevocation`).
/// - The pairing loop waits out outages itself, until the code expires.
/// - An authorization code (partner consent) is sent once per `completeAuthorization`; after a network failure the
///   consent stays pending, and the app may complete the same callback again.
struct OAuthHTTPEndpoint: OAuthEndpoint {
    let transport: any HTTPTransport
    let base: Result<APIBase, ProfirestUsageError>
    let settings: PipelineSettings

    /// Form members whose values are secrets, blanked in any error text the server echoes them in.
    private static let secretFields = ["refresh_token", "device_code", "code", "code_verifier", "token"]

    func token(form: [String: String], basicAuth: String?) async throws -> TokenResponse {
        let response = try await send("POST", "/oauth/token", form: form, basicAuth: basicAuth)
        return try ResponseDecoding.decode(TokenResponse.self, from: response, errors: errors(form, basicAuth))
    }

    func deviceAuthorization(form: [String: String]) async throws -> DeviceAuthorization {
        let response = try await send("POST", "/oauth/device_authorization", form: form, basicAuth: nil)
        return try ResponseDecoding.decode(DeviceAuthorization.self, from: response, errors: errors(form, nil))
    }

    func revoke(form: [String: String], basicAuth: String?) async throws {
        _ = try await send("POST", "/oauth/revoke", form: form, basicAuth: basicAuth)
    }

    func metadata() async throws -> AuthorizationServerMetadata {
        let response = try await send("GET", "/.well-known/oauth-authorization-server", form: nil, basicAuth: nil)
        return try ResponseDecoding.decode(AuthorizationServerMetadata.self, from: response, errors: errors([:], nil))
    }

    private func errors(_ form: [String: String], _ basicAuth: String?) -> ErrorFactory {
        let secrets = Self.secretFields.compactMap { form[$0] } + [basicAuth].compactMap { $0 }
        return settings.errors(scrubbing: secrets)
    }

    private func send(_ method: String, _ path: String, form: [String: String]?, basicAuth: String?) async throws
        -> APIResponse
    {
        let base = try self.base.get()
        guard base.origin.mayCarryTokens else {
            throw ProfirestUsageError(
                "OAuth requests carry secrets and are never sent over plain http to \(base.origin.host); use https "
                    + "(or a loopback address such as http://127.0.0.1:8080 for the sandbox)")
        }
        guard let url = URL(string: base.root + path) else {
            throw ProfirestUsageError("baseURL \"\(base.root)\" does not make a valid OAuth URL")
        }
        var headers = ["Accept": "application/json", "User-Agent": LibraryVersion.userAgent]
        if let language = settings.language { headers["Accept-Language"] = language }
        if let basicAuth { headers["Authorization"] = basicAuth }
        var body: Data?
        if let form {
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            body = Data(PercentEncoding.formBody(form).utf8)
        }
        let request = HTTPRequest(method: method, url: url, headers: headers, body: body, timeout: settings.timeout)
        let attempt = Attempt(
            transport: transport, settings: settings, timeout: settings.timeout,
            formSecrets: Self.secretFields.compactMap { form?[$0] } + [basicAuth].compactMap { $0 })
        switch try await attempt.perform(request) {
        case .succeeded(let response) where response.status != 304:
            return response
        case .succeeded(let response), .failed(_, answer: let response?):
            // An OAuth error body is the authorization server's answer, whatever its challenge says.
            if let oauth = Self.oauthError(in: response, redaction: attempt.errors.redaction) { throw oauth }
            if let proxy = ProxyChallenge(response), !Self.isAuthorizationServers(proxy) {
                throw attempt.errors.proxyLogin(proxy, status: response.status, requestID: response.header("Profirest-Request-Id"))
            }
            if response.status == 401, form != nil, response.data.isEmpty {
                // A 401 from an OAuth endpoint means the client's own authentication failed (RFC 6749 5.2). With a
                // Basic challenge, Linux URLSession hands it back without its body (see AuthChallenge).
                throw ProfirestOAuthError(
                    error: "invalid_client", detail: "the server did not accept the client's credentials (HTTP 401 from \(path))")
            }
            throw attempt.errors.fromResponse(response, now: settings.clock())
        case .failed(let error, answer: nil):
            throw error
        case .streaming(let head):
            await head.body.close()
            throw attempt.errors.make(ErrorCode.invalidResponse, detail: "a stream instead of an answer from \(path)")
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
