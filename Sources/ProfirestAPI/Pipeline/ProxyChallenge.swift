import Foundation

/// Tells a proxy's login from the API's: a 407, or a 401 whose challenge is not `Bearer`, comes from something in
/// front of the API (a corporate proxy, a gateway with `auth_basic`) and must never be taken for a rejected token —
/// a refresh would spend a refresh token for nothing and the next call would meet the same login again.
struct ProxyChallenge: Sendable, Hashable {
    /// The authentication scheme asked for: `Basic`, `Digest`, `Negotiate`…
    var scheme: String
    /// The challenge's realm, if it names one.
    var realm: String?

    /// The proxy's challenge in `response`, or nil when the answer is the API's own (no challenge, or a Bearer one).
    init?(_ response: APIResponse) {
        let header = response.status == 407 ? "Proxy-Authenticate" : "WWW-Authenticate"
        guard response.status == 407 || response.status == 401 else { return nil }
        guard let value = response.header(header), let first = Self.challenges(value).first else {
            // A 407 is a proxy's whatever it says; a 401 without a challenge is left to its body.
            if response.status == 407 { self.init(scheme: "unknown", realm: nil) } else { return nil }
            return
        }
        if response.status == 401, Self.challenges(value).contains(where: { $0.scheme.lowercased() == "bearer" }) { return nil }
        self.init(scheme: first.scheme, realm: first.realm)
    }

    init(scheme: String, realm: String?) {
        self.scheme = scheme
        self.realm = realm
    }

    /// The schemes and realms of a challenge header (RFC 9110 11.6.1), e.g. `Basic realm="corp", Negotiate`.
    static func challenges(_ header: String) -> [ProxyChallenge] {
        var found: [ProxyChallenge] = []
        // A new challenge starts with a token not followed by `=` (an auth-param is `name=value`).
        let pattern = #"(?:^|,)\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)(?=\s+[^=,\s]|\s*,|\s*$)"#
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        let text = header as NSString
        let matches = regex.matches(in: header, range: NSRange(location: 0, length: text.length))
        for (index, match) in matches.enumerated() {
            let scheme = text.substring(with: match.range(at: 1))
            let end = index + 1 < matches.count ? matches[index + 1].range.location : text.length
            let params = text.substring(with: NSRange(location: match.range.upperBound, length: end - match.range.upperBound))
            found.append(ProxyChallenge(scheme: scheme, realm: realm(in: params)))
        }
        return found
    }

    private static func realm(in params: String) -> String? {
        guard let range = params.range(of: #"realm\s*=\s*("([^"\\]|\\.)*"|[^,\s]*)"#, options: [.regularExpression, .caseInsensitive])
        else { return nil }
        var value = String(params[range])
        value = String(value[value.index(after: value.firstIndex(of: "=")!)...]).trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
        return value.replacingOccurrences(of: "\\\"", with: "\"")
    }

    /// How the error's detail names it: `Basic realm "corp"`.
    var summary: String { realm.map { "\(scheme) realm \"\($0)\"" } ?? scheme }
}
