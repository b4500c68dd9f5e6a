import Foundation

/// Base64url (RFC 4648 §5) without padding, as used by PKCE verifiers and JWT segments.
enum Base64URL {
    static func encode(_ data: Data) -> String {
        var s = data.base64EncodedString()
        while s.last == "=" { s.removeLast() }
        return String(s.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
    }

    /// Nil for characters outside the url-safe alphabet, misplaced padding or an impossible length.
    static func decode(_ string: String) -> Data? {
        var body = Substring(string)
        // Padding is optional, but when present it must make the length a multiple of four.
        if body.hasSuffix("=") {
            guard string.utf8.count % 4 == 0 else { return nil }
            while body.last == "=" { body.removeLast() }
            guard string.utf8.count - body.utf8.count <= 2 else { return nil }
        }
        var standard = [UInt8]()
        standard.reserveCapacity(body.utf8.count + 3)
        for c in body.utf8 {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                standard.append(c)
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            default: return nil
            }
        }
        // One leftover character carries only 6 bits, less than a byte: no encoder produces it.
        guard standard.count % 4 != 1 else { return nil }
        while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(standard))
    }
}
