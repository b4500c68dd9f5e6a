import Foundation

/// Where one call goes: the absolute URL, and whether it is the API's own origin (the only one that gets tokens).
struct RequestTarget: Sendable {
    let url: URL
    let isAPIOrigin: Bool
    let origin: Origin

    /// Resolves a path as the reference writes it: relative to `/v2`; `/oauth/…` and `/.well-known/…` from the
    /// root. An absolute URL of the API's origin is used as it is; one of another origin is sent without
    /// `Authorization` and `Profirest-Staff-Token` (a pre-signed download link, say).
    static func resolve(_ path: String, query: [String: QueryValue], base: APIBase) throws -> RequestTarget {
        let encodedQuery = QueryEncoding.encode(query)
        let lower = path.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            guard let url = URL(string: append(encodedQuery, to: path)) else {
                throw ProfirestUsageError(
                    "\"\(Origin.redactingUserInfo(path))\" is not a valid URL; pass a path such as /restaurants/11")
            }
            if url.user(percentEncoded: true) != nil || url.password(percentEncoded: true) != nil {
                throw ProfirestUsageError(
                    "\"\(Origin.redactingUserInfo(path))\" carries a user name or password; credentials never go in a URL")
            }
            guard let origin = Origin(url) else {
                throw ProfirestUsageError(
                    "\"\(Origin.redactingUserInfo(path))\" is not a valid URL; pass a path such as /restaurants/11")
            }
            return RequestTarget(url: url, isAPIOrigin: origin == base.origin, origin: origin)
        }
        guard path.hasPrefix("/") else {
            throw ProfirestUsageError(
                "the path \"\(path)\" must start with \"/\" and be relative to /v2, e.g. /restaurants/11/catalog")
        }
        if path == "/v2" || path.hasPrefix("/v2/") || path.hasPrefix("/v2?") {
            throw ProfirestUsageError(
                "write paths relative to /v2 as the reference does: \"\(path.dropFirst(3))\" instead of \"\(path)\"")
        }
        let fromRoot = path.hasPrefix("/oauth/") || path.hasPrefix("/.well-known/")
        let full = base.root + (fromRoot ? "" : "/v2") + escapePath(path)
        guard let url = URL(string: append(encodedQuery, to: full)) else {
            throw ProfirestUsageError("the path \"\(path)\" does not make a valid URL")
        }
        return RequestTarget(url: url, isAPIOrigin: true, origin: base.origin)
    }

    private static func append(_ query: String, to url: String) -> String {
        if query.isEmpty { return url }
        return url + (url.contains("?") ? "&" : "?") + query
    }

    /// Percent-encodes what cannot stand in a URL path (spaces, non-ASCII names in ids) and leaves existing
    /// `%XX` escapes, `/` and a query the caller wrote after `?` alone.
    static func escapePath(_ path: String) -> String {
        var out = ""
        out.reserveCapacity(path.utf8.count)
        var inQuery = false
        for byte in path.utf8 {
            if byte == UInt8(ascii: "?") { inQuery = true }
            if isAllowed(byte, inQuery: inQuery) {
                out.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    private static func isAllowed(_ byte: UInt8, inQuery: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"),
            UInt8(ascii: "%"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: ":"),
            UInt8(ascii: "@"):
            return true
        case UInt8(ascii: "&"), UInt8(ascii: "="), UInt8(ascii: "?"), UInt8(ascii: "+"):
            // Meaningful in a query the caller wrote; in a path `+` is literal, and `&`/`=` are allowed there too.
            return inQuery || byte != UInt8(ascii: "?")
        default:
            return false
        }
    }
}
