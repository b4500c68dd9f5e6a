import Foundation

/// Percent-encoding in the two flavours the library needs, in one place. Both encode `+`: `URLComponents` leaves it
/// bare and servers read a bare `+` in a query or form as a space.
enum PercentEncoding {
    /// RFC 3986: only unreserved characters (letters, digits, `-._~`) stay; for path segments (an id with `/` stays
    /// one segment) and query components.
    static func rfc3986(_ text: String) -> String {
        encode(text, spaceAsPlus: false) { byte in
            isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "~")
        }
    }

    /// `application/x-www-form-urlencoded` (WHATWG URL standard): letters, digits and `*-._` stay, a space is `+`.
    static func form(_ text: String) -> String {
        encode(text, spaceAsPlus: true) { byte in
            isAlphanumeric(byte) || byte == UInt8(ascii: "*") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "_")
        }
    }

    /// A form body `a=1&b=2`, keys sorted so a request is reproducible in tests and logs.
    static func formBody(_ fields: [String: String]) -> String {
        fields.sorted { $0.key < $1.key }.map { form($0.key) + "=" + form($0.value) }.joined(separator: "&")
    }

    private static func encode(_ text: String, spaceAsPlus: Bool, keeping: (UInt8) -> Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if keeping(byte) {
                out.unicodeScalars.append(UnicodeScalar(byte))
            } else if spaceAsPlus, byte == UInt8(ascii: " ") {
                out += "+"
            } else {
                out += "%" + hex(byte >> 4) + hex(byte & 0xF)
            }
        }
        return out
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func hex(_ nibble: UInt8) -> String {
        String(UnicodeScalar(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10))
    }
}
