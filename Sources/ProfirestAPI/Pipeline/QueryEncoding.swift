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
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            default:
                out += "%" + hex(byte >> 4) + hex(byte & 0xF)
            }
        }
        return out
    }

    private static func hex(_ nibble: UInt8) -> String {
        String(UnicodeScalar(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10))
    }
}
