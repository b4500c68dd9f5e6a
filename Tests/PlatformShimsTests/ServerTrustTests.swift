import AppleShims
import Foundation
import XCTest
@testable import PlatformShims

/// ServerTrust.swift and AuthChallenge.swift's Apple branch — the library's files, compiled in PlatformShims against
/// the Security and URL Loading System shims — answering challenges: a server whose certificate a private CA issued is
/// trusted when that CA is among `trustedCertificates`, the system's authorities stay trusted beside it, and every
/// other challenge is left to the system. What this cannot show: Security's real chain building and evaluation.
final class ServerTrustTests: XCTestCase {
    /// Three certificates with a certificate's outer DER shape, told apart by their serial number.
    private static func certificate(serial: UInt8) -> Data {
        Data([0x30, 0x0B, 0x30, 0x03, 0x02, 0x01, serial, 0x30, 0x00, 0x03, 0x02, 0x00, 0x00])
    }
    private let privateCA = certificate(serial: 0x11)
    private let otherCA = certificate(serial: 0x22)
    private let publicCA = certificate(serial: 0x33)

    private func challenge(_ method: String, trust: SecTrust?) -> URLAuthenticationChallenge {
        URLAuthenticationChallenge(shimProtectionSpace: URLProtectionSpace(shimAuthenticationMethod: method, serverTrust: trust))
    }

    /// As Apple's: bytes that are no certificate make none, so a trust cannot be given them as an anchor.
    func testBytesThatAreNoCertificateMakeNone() {
        XCTAssertNotNil(SecCertificateCreateWithData(nil, privateCA))
        XCTAssertNil(SecCertificateCreateWithData(nil, Data([0x30, 0x82, 0x01, 0x0a] + Array(repeating: 0x11, count: 20))))
        XCTAssertNil(SecCertificateCreateWithData(nil, Data([0x30, 0x00])))
    }

    func testAServerOfThePrivateCAIsTrusted() throws {
        let trust = SecTrust(chainingTo: privateCA, systemTrusted: false)
        let answer = try XCTUnwrap(
            ServerTrust.answer(challenge(NSURLAuthenticationMethodServerTrust, trust: trust), anchors: [privateCA]))
        XCTAssertEqual(answer.0, .useCredential)
        XCTAssertTrue(answer.1?.shimTrust === trust, "the credential is made for the evaluated trust")
    }

    func testTheSystemsAuthoritiesStayTrustedBesideTheExtraOnes() throws {
        let trust = SecTrust(chainingTo: publicCA, systemTrusted: true)
        let answer = try XCTUnwrap(
            ServerTrust.answer(challenge(NSURLAuthenticationMethodServerTrust, trust: trust), anchors: [privateCA]))
        XCTAssertEqual(answer.0, .useCredential, "SecTrustSetAnchorCertificatesOnly(false) after the anchors are set")
    }

    func testAnotherAuthorityIsLeftToTheSystemWhichFailsIt() throws {
        let trust = SecTrust(chainingTo: otherCA, systemTrusted: false)
        let answer = try XCTUnwrap(
            ServerTrust.answer(challenge(NSURLAuthenticationMethodServerTrust, trust: trust), anchors: [privateCA]))
        XCTAssertEqual(answer.0, .performDefaultHandling)
        XCTAssertNil(answer.1)
    }

    func testWithoutExtraAuthoritiesOrForAnHTTPChallengeNothingIsAnswered() {
        let trust = SecTrust(chainingTo: privateCA, systemTrusted: false)
        XCTAssertNil(ServerTrust.answer(challenge(NSURLAuthenticationMethodServerTrust, trust: trust), anchors: []))
        XCTAssertNil(ServerTrust.answer(challenge(NSURLAuthenticationMethodHTTPBasic, trust: nil), anchors: [privateCA]))
        // AuthChallenge on Apple platforms: a 401's challenge gets default handling (the task ends with the 401).
        let (disposition, credential, head) = AuthChallenge.answer(
            challenge(NSURLAuthenticationMethodHTTPBasic, trust: nil), anchors: [privateCA])
        XCTAssertEqual(disposition, .performDefaultHandling)
        XCTAssertNil(credential)
        XCTAssertNil(head)
        let (trusted, _, _) = AuthChallenge.answer(
            challenge(NSURLAuthenticationMethodServerTrust, trust: trust), anchors: [privateCA])
        XCTAssertEqual(trusted, .useCredential)
    }
}
