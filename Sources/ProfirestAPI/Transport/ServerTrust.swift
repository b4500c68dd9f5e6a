#if (!canImport(FoundationNetworking) && canImport(Security)) || PROFIREST_SHIMS
// Apple only. On Linux the test-only target PlatformShims compiles this same file (PROFIREST_SHIMS) against
// declaration shims of Security and of Darwin's URL Loading System (Sources/AppleShims); see Tests/PlatformShimsTests.
import Foundation
#if PROFIREST_SHIMS
import AppleShims
#else
import Security
#endif

/// Trusts a server whose certificate chains to one of the transport's extra certificate authorities as well as to
/// the system's (Apple platforms; `URLSessionTransport(trustedCertificates:)`).
enum ServerTrust {
    /// The answer to a server-trust challenge, or nil for any other challenge or when there are no extra anchors.
    /// A certificate that chains to none is left to the system's evaluation, which fails the task with
    /// `URLError(.serverCertificateUntrusted)` — the library's `certificate_untrusted`.
    static func answer(
        _ challenge: URLAuthenticationChallenge, anchors: [Data]
    ) -> (URLSession.AuthChallengeDisposition, URLCredential?)? {
        guard !anchors.isEmpty, challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
              let trust = challenge.protectionSpace.serverTrust else { return nil }
        let certificates = anchors.compactMap { SecCertificateCreateWithData(nil, $0 as CFData) }
        guard SecTrustSetAnchorCertificates(trust, certificates as CFArray) == errSecSuccess,
              // false: the system's anchors stay trusted besides these.
              SecTrustSetAnchorCertificatesOnly(trust, false) == errSecSuccess else { return (.performDefaultHandling, nil) }
        var error: CFError?
        guard SecTrustEvaluateWithError(trust, &error) else { return (.performDefaultHandling, nil) }
        return (.useCredential, URLCredential(trust: trust))
    }
}
#endif
