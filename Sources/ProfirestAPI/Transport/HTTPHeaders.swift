import Foundation

/// Case-insensitive header lookup shared by requests, responses and `APIResponse`.
enum HTTPHeaders {
    static func value(_ name: String, in headers: [String: String]) -> String? {
        // The exact spelling first: it is what the library itself writes, and it avoids a scan.
        if let exact = headers[name] { return exact }
        for (key, value) in headers where sameName(key, name) { return value }
        return nil
    }

    /// Whether two header names are the same without regard to case: byte by byte when both are ASCII (every real
    /// header name; Foundation's comparison costs far more on Linux), Foundation's `caseInsensitiveCompare` otherwise.
    static func sameName(_ a: String, _ b: String) -> Bool {
        let x = a.utf8
        let y = b.utf8
        if x.allSatisfy({ $0 < 0x80 }), y.allSatisfy({ $0 < 0x80 }) {
            return x.count == y.count && zip(x, y).allSatisfy { lowered($0) == lowered($1) }
        }
        return a.caseInsensitiveCompare(b) == .orderedSame
    }

    private static func lowered(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}
