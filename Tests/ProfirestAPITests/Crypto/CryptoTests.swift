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
        assertSHA256(Data("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        assertSHA256(Data(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        assertSHA256(
            Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    func testSHA256OneMillionA() {
        assertSHA256(
            Data(repeating: UInt8(ascii: "a"), count: 1_000_000),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
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
            XCTAssertEqual(Crypto.hmacSHA256(key: c.key, message: c.message).hex, c.mac, "case \(n)")
            XCTAssertEqual(PortableSHA256.hmac(key: c.key, message: c.message).hex, c.mac, "portable case \(n)")
        }
    }

    func testPBKDF2HMACSHA256Vectors() {
        let cases: [(password: String, salt: String, iterations: Int, length: Int, key: String)] = [
            ("password", "salt", 1, 32, "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"),
            ("password", "salt", 2, 32, "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43"),
            ("password", "salt", 4096, 32, "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"),
            ("passwordPASSWORDpassword", "saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096, 40,
             "348c89dbcbd32b2f32d814b8116e84cf2b17347ebc1800181c4e2a1fb8dd53e1c635518c7dac47e9"),
            ("pass\0word", "sa\0lt", 4096, 16, "89b69d0516f829893c696226650a8687"),
            // A password longer than a block and a key spanning three blocks; from Python's hashlib.
            (String(repeating: "k", count: 100), "s", 3, 70,
             "5393fdd22141d18e0ad7f185974c30da7be2e9b79425e88e4991c4fc7c9027cb895e27ba09d1ff1d841d8a431a248da1"
                + "91e13e60ea407957d3dee1d796093886dc016c29c6ef"),
        ]
        for c in cases {
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
