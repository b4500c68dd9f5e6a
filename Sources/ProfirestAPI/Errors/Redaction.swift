/// Keeps tokens, secrets and PINs out of errors: a server may echo a request back in a problem body, and an
/// error tends to end up in logs and crash reports.
struct Redaction: Sendable {
    /// Exact values known to be secret for this request (the access token, the staff token).
    var secrets: [String]

    static let placeholder = "[redacted]"

    /// Member names whose values are blanked wherever they occur in a problem body.
    static let secretKeys: Set<String> = [
        "secret", "pin", "password", "token", "access_token", "refresh_token", "client_secret", "device_code",
        "code_verifier", "authorization", "staff_token",
    ]

    func scrub(_ text: String) -> String {
        var text = text
        // Short values would blank ordinary words; real tokens are long, and PINs only ever sit under secret keys.
        for secret in secrets where secret.count >= 8 && text.contains(secret) {
            text = text.replacingOccurrences(of: secret, with: Self.placeholder)
        }
        return text
    }

    func scrub(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let s): return .string(scrub(s))
        case .array(let items): return .array(items.map(scrub))
        case .object(let members):
            var out: [String: JSONValue] = [:]
            for (key, member) in members {
                // The member name too: a server may echo a token as a key (e.g. in a field-error map).
                out[scrub(key)] = Self.secretKeys.contains(key.lowercased()) ? .string(Self.placeholder) : scrub(member)
            }
            return .object(out)
        default: return value
        }
    }
}
