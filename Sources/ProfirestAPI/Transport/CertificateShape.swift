import Foundation

/// Whether bytes have the outer shape of an X.509 certificate in DER (RFC 5280 §4.1): a SEQUENCE of exactly a
/// `tbsCertificate` SEQUENCE (starting with its version `[0]` or its serial number INTEGER), an algorithm SEQUENCE
/// and a BIT STRING, every length definite and the whole consumed. Apple's `SecCertificateCreateWithData` returns nil
/// for bytes that are no certificate and a trust built from the rest silently lacks it; checking the shape when the
/// PEM is read makes such a block a usage error on every platform instead of a later `certificate_untrusted`.
enum CertificateShape {
    static func isX509(_ der: Data) -> Bool {
        let bytes = [UInt8](der)
        guard let outer = element(bytes, at: 0), outer.tag == 0x30, outer.end == bytes.count,
              let tbs = element(bytes, at: outer.content), tbs.tag == 0x30,
              let algorithm = element(bytes, at: tbs.end), algorithm.tag == 0x30,
              let signature = element(bytes, at: algorithm.end), signature.tag == 0x03, signature.end == outer.end,
              tbs.content < tbs.end, bytes[tbs.content] == 0xA0 || bytes[tbs.content] == 0x02
        else { return false }
        return true
    }

    /// The tag, where the content starts and where the element ends, for a DER element at `start` (single-byte tag,
    /// definite length in at most four bytes); nil when it does not fit in `bytes`.
    private static func element(_ bytes: [UInt8], at start: Int) -> (tag: UInt8, content: Int, end: Int)? {
        guard start + 2 <= bytes.count else { return nil }
        let first = Int(bytes[start + 1])
        var length = first
        var content = start + 2
        if first & 0x80 != 0 {
            let count = first & 0x7F
            guard (1...4).contains(count), content + count <= bytes.count else { return nil }
            length = bytes[content..<content + count].reduce(0) { $0 << 8 | Int($1) }
            content += count
        }
        guard length <= bytes.count - content else { return nil }
        return (bytes[start], content, content + length)
    }
}
