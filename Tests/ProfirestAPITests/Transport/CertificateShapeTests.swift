import Foundation
import XCTest
@testable import ProfirestAPI

/// A PEM block that is no X.509 certificate is a usage error when the certificates are read, on every platform —
/// Apple's `SecCertificateCreateWithData` would drop it silently — and every real certificate passes.
final class CertificateShapeTests: XCTestCase {
    /// SEQUENCE { SEQUENCE { INTEGER 1 }, SEQUENCE {}, BIT STRING (empty) }: a certificate's outer shape, nothing more.
    static let smallestShape = Data([0x30, 0x0B, 0x30, 0x03, 0x02, 0x01, 0x01, 0x30, 0x00, 0x03, 0x02, 0x00, 0x00])

    /// Real certificates pass: eight public root CAs (RSA and ECDSA, 1998 to 2020), committed in Tests/Fixtures so
    /// that the test reads the same file on every runner (macOS has no /etc/ssl/certs/ca-certificates.crt).
    func testRealCertificatesAllHaveTheShape() throws {
        let bundle = packageRoot.appendingPathComponent("Tests/Fixtures/public-root-cas.pem").path
        let certificates = try TrustedCertificates.pemFile(bundle).load().certificates
        XCTAssertEqual(certificates.count, 8, "the fixture's authorities")
        for certificate in certificates { XCTAssertTrue(CertificateShape.isX509(certificate)) }
        XCTAssertTrue(CertificateShape.isX509(Self.smallestShape))
    }

    func testBytesThatAreNoCertificateAreRefused() {
        var long = Self.smallestShape
        long[1] = 0x81  // a long-form length byte where a short one stood
        let cases: [(String, [UInt8])] = [
            ("empty", []),
            ("a bare SEQUENCE", [0x30, 0x00]),
            ("twenty zeros in a SEQUENCE", [0x30] + [UInt8](repeating: 0, count: 20)),
            ("a length past the end", [0x30, 0x82, 0x01, 0x0A] + [UInt8](repeating: 0x11, count: 20)),
            ("a byte after the certificate", Array(Self.smallestShape) + [0x00]),
            ("a byte missing", Array(Self.smallestShape.dropLast())),
            ("indefinite length", [0x30, 0x80] + Array(Self.smallestShape.dropFirst(2)) + [0x00, 0x00]),
            ("no signature", [0x30, 0x07, 0x30, 0x03, 0x02, 0x01, 0x01, 0x30, 0x00]),
            ("a SET, not a SEQUENCE", [0x31] + Array(Self.smallestShape.dropFirst())),
            ("a tbsCertificate without version or serial", [0x30, 0x0B, 0x30, 0x03, 0x04, 0x01, 0x01, 0x30, 0x00, 0x03, 0x02, 0x00, 0x00]),
            ("a malformed long length", Array(long)),
        ]
        for (name, bytes) in cases {
            XCTAssertFalse(CertificateShape.isX509(Data(bytes)), name)
            let pem = "-----BEGIN CERTIFICATE-----\n\(Data(bytes).base64EncodedString())\n-----END CERTIFICATE-----\n"
            XCTAssertThrowsError(try TrustedCertificates.pem(Data(pem.utf8)).load(), name) { error in
                XCTAssertTrue((error as? ProfirestUsageError)?.message.contains("X.509") == true, "\(name): \(error)")
            }
        }
    }
}
