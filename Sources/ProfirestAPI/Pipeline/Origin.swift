import Foundation

/// The scheme, host and port a URL reaches, parsed once, and the library's one rule for where a token or a secret
/// may go: over https to any host, over plain http only to this machine.
///
/// "This machine" is decided on the host exactly as the parsed URL holds it (lowercased, still percent-encoded),
/// never by its first characters: an IPv4 literal in 127.0.0.0/8 written as four decimal parts without leading
/// zeros, the IPv6 literal `::1` in any spelling, or the name `localhost` in any case (RFC 6761 §6.3 reserves it
/// for loopback; libcurl answers it without asking DNS, and system resolvers read it from the hosts file). Every
/// other spelling that some resolver would also route to loopback — `127.1`, `2130706433`, `0x7f.0.0.1`, octal
/// parts, `localhost.`, an IPv4-mapped IPv6 address, a zone id, percent-escapes — is refused rather than reasoned
/// about: a sandbox can always be addressed as `http://127.0.0.1:8080`.
struct Origin: Sendable, Hashable {
    /// `http` or `https`.
    let scheme: String
    /// Lowercased and percent-encoded as in the URL; an IPv6 literal without its brackets.
    let host: String
    let port: Int

    /// The origin of an http(s) URL with a host and without user information; nil for anything else. A URL with
    /// user information is no origin to send to: credentials never ride in a URL, and parsers disagree on where
    /// the host of `http://a\\@127.0.0.1` is (RFC 3986 reads user `a\\`, a browser's WHATWG parser host `a`).
    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            var host = url.host(percentEncoded: true)?.lowercased(), !host.isEmpty,
            url.user(percentEncoded: true) == nil, url.password(percentEncoded: true) == nil
        else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    /// Whether requests to this origin stay on this machine (see the type's rule).
    var isLoopback: Bool { Self.isLoopback(host: host) }

    /// Whether a bearer token, a staff token, a refresh token or a client secret may be sent here.
    var mayCarrySecrets: Bool { scheme == "https" || isLoopback }

    /// `host:port` for messages, with an IPv6 literal in brackets.
    var hostAndPort: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    /// The loopback rule on a host as a parsed URL holds it (brackets of an IPv6 literal optional).
    static func isLoopback(host: String) -> Bool {
        var name = Substring(host.lowercased())
        if name.hasPrefix("["), name.hasSuffix("]") { name = name.dropFirst().dropLast() }
        if name == "localhost" { return true }
        if let v4 = strictIPv4(name) { return v4.first == 127 }
        if let v6 = ipv6(name) { return v6 == [UInt16](repeating: 0, count: 7) + [1] }
        return false
    }

    /// Four decimal parts of 0–255 without leading zeros, as every resolver reads them alike; nil for anything else.
    static func strictIPv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0 >= "0" && $0 <= "9" }),
                part.count == 1 || part.first != "0", let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    /// An IPv6 literal of hex groups with at most one `::`, as eight groups; nil for anything else (an embedded
    /// IPv4 part or a zone id included, which the loopback rule refuses anyway).
    static func ipv6(_ text: Substring) -> [UInt16]? {
        func groups(_ part: Substring) -> [UInt16]? {
            if part.isEmpty { return [] }
            var out: [UInt16] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1...4).contains(group.count), let value = UInt16(group, radix: 16),
                    group.allSatisfy(\.isHexDigit)
                else { return nil }
                out.append(value)
            }
            return out
        }
        guard text.contains(":") else { return nil }
        let halves = text.components(separatedBy: "::")
        switch halves.count {
        case 1:
            guard let all = groups(text), all.count == 8 else { return nil }
            return all
        case 2:
            guard let head = groups(Substring(halves[0])), let tail = groups(Substring(halves[1])),
                head.count + tail.count <= 7
            else { return nil }
            return head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        default:
            return nil
        }
    }

    /// `text` with the user information of a URL in it (`user:password@`) replaced, for messages and descriptions:
    /// a password in a URL must not reach a log even when the URL is refused.
    static func redactingUserInfo(_ text: String) -> String {
        guard let schemeEnd = text.range(of: "://") else { return text }
        let authorityStart = schemeEnd.upperBound
        let rest = text[authorityStart...]
        let authorityEnd = rest.firstIndex(where: { "/?#\\".contains($0) }) ?? text.endIndex
        guard let at = text[authorityStart..<authorityEnd].lastIndex(of: "@") else { return text }
        return String(text[..<authorityStart]) + "<redacted>" + String(text[at...])
    }
}
