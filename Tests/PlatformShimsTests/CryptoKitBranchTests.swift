import Foundation
import XCTest
@testable import PlatformShims

/// Crypto+CryptoKit.swift — the library's file, compiled unchanged in PlatformShims against the CryptoKit shims — must
/// give the digests the portable code gives, on NIST SHA-256 and RFC 4231 HMAC-SHA256 vectors. The shims are backed by
/// the portable code, so this shows the branch passes the right bytes in and out (argument order, key vs message,
/// Data conversion), not that Apple's CryptoKit is correct. The CommonCrypto PBKDF2 branch is not compiled here.
final class CryptoKitBranchTests: XCTestCase {
    private func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    func testSHA256NISTVectors() {
        let vectors: [(Data, String)] = [
            (Data("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (Data(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            (Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
            (Data(repeating: UInt8(ascii: "a"), count: 1_000_000),
             "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
        ]
        for (n, (message, digest)) in vectors.enumerated() {
            XCTAssertEqual(hex(Crypto.cryptoKitSHA256(message)), digest, "CryptoKit branch, vector \(n)")
            XCTAssertEqual(hex(PortableSHA256.hash(message)), digest, "portable, vector \(n)")
        }
    }

    func testHMACSHA256RFC4231() {
        let longKey = Data(repeating: 0xaa, count: 131)
        let cases: [(key: Data, message: Data, mac: String)] = [
            (Data(repeating: 0x0b, count: 20), Data("Hi There".utf8),
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (Data("Jefe".utf8), Data("what do ya want for nothing?".utf8),
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            (Data(repeating: 0xaa, count: 20), Data(repeating: 0xdd, count: 50),
             "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
            (Data(1...25), Data(repeating: 0xcd, count: 50),
             "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
            (longKey, Data("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
            (longKey,
             Data(("This is a test using a larger than block-size key and a larger than block-size data. "
                 + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
             "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
        ]
        for (n, c) in cases.enumerated() {
            XCTAssertEqual(hex(Crypto.cryptoKitHMACSHA256(key: c.key, message: c.message)), c.mac, "CryptoKit branch, case \(n)")
            XCTAssertEqual(hex(PortableSHA256.hmac(key: c.key, message: c.message)), c.mac, "portable, case \(n)")
        }
        // RFC 4231 test case 5: the MAC truncated to 128 bits.
        let truncated = Crypto.cryptoKitHMACSHA256(key: Data(repeating: 0x0c, count: 20), message: Data("Test With Truncation".utf8))
        XCTAssertEqual(hex(truncated.prefix(16)), "a3b6167473100ee06e0c796c2955552b")
    }
}
