import XCTest
@testable import ProfirestAPI

/// Vectors from FIPS 180-2 (SHA-256), RFC 4231 (HMAC-SHA256) and the widely published PBKDF2-HMAC-SHA256
/// set. Each runs against `Crypto` (the platform's backend) and `PortableSHA256` (the pure-Swift one).
final class CryptoTests: XCTestCase {
    private func sha256Both(_ data: Data) -> (String, String) {
        (Crypto.sha256(data).hex, PortableSHA256.hash(data).hex)
    }

    private func assertSHA256(_ data: Data, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        let (platform, portable) = sha256Both(data)
        XCTAssertEqual(platform, expected, file: file, line: line)
        XCTAssertEqual(portable, expected, file: file, line: line)
    }

    func testSHA256NISTVectors() {
        for (message, digest) in CryptoVectors.sha256 { assertSHA256(message, digest) }
    }

    func testSHA256PaddingBoundaries() {
        // Lengths around 56 and 64 bytes exercise one- vs two-block padding; digests from Python's hashlib.
        let expected: [Int: String] = [
            55: "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59",
            56: "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562",
            63: "29af2686fd53374a36b0846694cc342177e428d1647515f078784d69cdb9e488",
            64: "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108",
            65: "4bfd2c8b6f1eec7a2afeb48b934ee4b2694182027e6d0fc075074f2fabb31781",
            119: "da18797ed7c3a777f0847f429724a2d8cd5138e6ed2895c3fa1a6d39d18f7ec6",
            120: "f52b23db1fbb6ded89ef42a23ce0c8922c45f25c50b568a93bf1c075420bbb7c",
            128: "471fb943aa23c511f6f72f8d1652d9c880cfa392ad80503120547703e56a2be5",
        ]
        for (length, digest) in expected {
            assertSHA256(Data((0..<length).map { UInt8($0 % 251) }), digest)
        }
    }

    func testHMACSHA256RFC4231() {
        for (n, c) in CryptoVectors.hmacSHA256.enumerated() {
            XCTAssertEqual(Crypto.hmacSHA256(key: c.key, message: c.message).hex, c.mac, "case \(n)")
            XCTAssertEqual(PortableSHA256.hmac(key: c.key, message: c.message).hex, c.mac, "portable case \(n)")
        }
    }

    func testPBKDF2HMACSHA256Vectors() {
        for c in CryptoVectors.pbkdf2SHA256 {
            let password = Data(c.password.utf8), salt = Data(c.salt.utf8)
            XCTAssertEqual(
                Crypto.pbkdf2SHA256(password: password, salt: salt, iterations: c.iterations, keyLength: c.length).hex,
                c.key, "\(c.password) c=\(c.iterations)")
            XCTAssertEqual(
                PortableSHA256.pbkdf2(password: password, salt: salt, iterations: c.iterations, keyLength: c.length)
                    .hex, c.key, "portable \(c.password) c=\(c.iterations)")
        }
    }

    func testRandomBytesHaveTheRequestedLengthAndDiffer() {
        XCTAssertEqual(Crypto.randomBytes(0).count, 0)
        XCTAssertEqual(Crypto.randomBytes(13).count, 13)
        let a = Crypto.randomBytes(32), b = Crypto.randomBytes(32)
        XCTAssertNotEqual(a, b, "two 256-bit draws colliding means the generator is broken")
        // Every byte value shows up in 64 KiB of random data unless the tail is left unfilled.
        XCTAssertEqual(Set(Crypto.randomBytes(65_536)).count, 256)
    }
}
