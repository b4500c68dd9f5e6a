import Foundation

/// The identity layer's view of the authorization server: the few `/oauth/*` and `/.well-known/*` calls it makes.
///
/// Kept apart from the request pipeline so pairing, refreshing and consent can be tested with a scripted endpoint,
/// and so the wiring is a thin adapter: it sends the form as `application/x-www-form-urlencoded` (with
/// `Authorization: Basic …` when `basicAuth` is given), decodes a success, and throws `ProfirestOAuthError` for an
/// OAuth error body (RFC 6749 5.2). Failures without an OAuth answer (no network, a 5xx) are thrown as they are.
protocol OAuthEndpoint: Sendable {
    /// `POST /oauth/token`. `basicAuth` is the complete header value (`Basic …`) for a confidential client.
    func token(form: [String: String], basicAuth: String?) async throws -> TokenResponse
    /// `POST /oauth/device_authorization` (RFC 8628 3.1).
    func deviceAuthorization(form: [String: String]) async throws -> DeviceAuthorization
    /// `POST /oauth/revoke` (RFC 7009).
    func revoke(form: [String: String], basicAuth: String?) async throws
    /// `GET /.well-known/oauth-authorization-server` (RFC 8414).
    func metadata() async throws -> AuthorizationServerMetadata
}

/// Who we are to the token endpoint: a public client sends `client_id` in the form; a confidential one
/// authenticates with HTTP Basic (client_secret_basic) and never puts its secret in a form.
struct OAuthClient: Sendable {
    let clientID: String
    let clientSecret: String?

    /// `Authorization` for a confidential client: `Basic base64(urlencode(id) ":" urlencode(secret))`, the
    /// form-encoding first as RFC 6749 2.3.1 requires, so a `:` or `+` in either survives.
    var basicAuth: String? {
        guard let clientSecret else { return nil }
        let pair = PercentEncoding.form(clientID) + ":" + PercentEncoding.form(clientSecret)
        return "Basic " + Data(pair.utf8).base64EncodedString()
    }

    /// `fields` plus `client_id` when the client is public.
    func form(_ fields: [String: String]) -> [String: String] {
        var form = fields
        if clientSecret == nil { form["client_id"] = clientID }
        return form
    }
}
