import Foundation
import XCTest
@testable import PlatformShims

/// Crypto+CryptoKit.swift — the library's file, compiled unchanged in PlatformShims against the CryptoKit shims — must
/// give the digests the portable code gives, on NIST SHA-256 and RFC 4231 HMAC-SHA256 vectors. The shims are backed by
/// the portable code, so this shows the branch passes the right bytes in and out (argument order, key vs message,
/// Data conversion), not that Apple's CryptoKit is correct. The same for the CommonCrypto PBKDF2 branch.
final class AppleCryptoBranchTests: XCTestCase {
    private func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    func testSHA256NISTVectors() {
        for (n, (message, digest)) in CryptoVectors.sha256.enumerated() {
            XCTAssertEqual(hex(Crypto.cryptoKitSHA256(message)), digest, "CryptoKit branch, vector \(n)")
            XCTAssertEqual(hex(PortableSHA256.hash(message)), digest, "portable, vector \(n)")
        }
    }

    func testHMACSHA256RFC4231() {
        for (n, c) in CryptoVectors.hmacSHA256.enumerated() {
            XCTAssertEqual(hex(Crypto.cryptoKitHMACSHA256(key: c.key, message: c.message)), c.mac, "CryptoKit branch, case \(n)")
            XCTAssertEqual(hex(PortableSHA256.hmac(key: c.key, message: c.message)), c.mac, "portable, case \(n)")
        }
        // RFC 4231 test case 5: the MAC truncated to 128 bits.
        let truncated = Crypto.cryptoKitHMACSHA256(key: Data(repeating: 0x0c, count: 20), message: Data("Test With Truncation".utf8))
        XCTAssertEqual(hex(truncated.prefix(16)), "a3b6167473100ee06e0c796c2955552b")
    }

    func testPBKDF2HMACSHA256Vectors() throws {
        for c in CryptoVectors.pbkdf2SHA256 {
            let password = Data(c.password.utf8), salt = Data(c.salt.utf8)
            let key = try XCTUnwrap(
                Crypto.commonCryptoPBKDF2(password: password, salt: salt, iterations: c.iterations, keyLength: c.length))
            XCTAssertEqual(hex(key), c.key, "CommonCrypto branch, \(c.password) c=\(c.iterations)")
        }
        XCTAssertNil(
            Crypto.commonCryptoPBKDF2(password: Data("p".utf8), salt: Data("s".utf8), iterations: -1, keyLength: 32),
            "an iteration count that is no UInt32 falls back (nil)")
    }

    /// The sandbox's OFFLINE_APPROVAL_VECTOR (sandbox/tests/test_offline_approval.py; also OfflineApprovalsTests):
    /// PBKDF2 key, check byte and signature, computed through the CommonCrypto and CryptoKit branches.
    func testOfflineApprovalVector() throws {
        let key = try XCTUnwrap(Crypto.commonCryptoPBKDF2(
            password: Data("1234".utf8), salt: Data("profirest-jana-1".utf8), iterations: 20000, keyLength: 32))
        XCTAssertEqual(hex(key), "ad8b12fc38cd2aa0ff45aa2e48c8fd8bad773e88172cc7e889e26cb33cbe6ab2")
        XCTAssertEqual(Crypto.cryptoKitHMACSHA256(key: key, message: Data("profirest-offline-check".utf8))[0], 153)
        let message = "profirest-offline-approval/1\n01936f60-1c2d-7e3f-8a4b-5c6d7e8f9a0b\nemp_1\n2026-11-29T12:10:00Z\n"
            + "storno položky\n37800\nCZK"
        let signature = Crypto.cryptoKitHMACSHA256(key: key, message: Data(message.utf8)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        XCTAssertEqual(signature, "ROz8paqshHNx6Cp7xlXin9NkHY7eOKSCfmIKfigEuuY")
    }
}
