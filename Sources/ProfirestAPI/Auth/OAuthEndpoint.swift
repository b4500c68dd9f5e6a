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
        let pair = FormEncoding.encode(clientID) + ":" + FormEncoding.encode(clientSecret)
        return "Basic " + Data(pair.utf8).base64EncodedString()
    }

    /// `fields` plus `client_id` when the client is public.
    func form(_ fields: [String: String]) -> [String: String] {
        var form = fields
        if clientSecret == nil { form["client_id"] = clientID }
        return form
    }
}

/// `application/x-www-form-urlencoded` encoding (WHATWG URL standard): unreserved characters stay, a space
/// becomes `+`, everything else `%XX` — including `+` itself, which would otherwise read back as a space.
enum FormEncoding {
    static func encode(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "*"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            case UInt8(ascii: " "):
                out += "+"
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    /// RFC 3986 percent-encoding for a query value: only unreserved characters stay, so `+`, `&`, `=` and
    /// spaces (`%20`) arrive as sent — URLComponents would leave `+` bare, which servers read as a space.
    static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    /// `a=1&b=2`, keys sorted so a request is reproducible in tests and logs.
    static func body(_ form: [String: String]) -> String {
        form.sorted { $0.key < $1.key }.map { encode($0.key) + "=" + encode($0.value) }.joined(separator: "&")
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
