import Foundation

/// Builds a query string: keys in sorted order (the same request always has the same URL, which keeps logs and
/// caches comparable), empty values left out, arrays joined with commas, and everything but RFC 3986 unreserved
/// characters percent-encoded — `+` included, which `URLComponents` leaves alone and servers read as a space.
enum QueryEncoding {
    static func encode(_ query: [String: QueryValue]) -> String {
        var parts: [String] = []
        parts.reserveCapacity(query.count)
        for key in query.keys.sorted() {
            guard let value = query[key]?.encoded(escape: escape), !value.isEmpty else { continue }
            parts.append(escape(key) + "=" + value)
        }
        return parts.joined(separator: "&")
    }

    static func escape(_ text: String) -> String {
        PercentEncoding.rfc3986(text)
    }
}
