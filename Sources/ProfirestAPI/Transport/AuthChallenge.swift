import Foundation
#if PROFIREST_SHIMS
// The test-only target PlatformShims compiles this file against Darwin's URL Loading System and Security as declared in
// Sources/AppleShims (the Apple branches below), instead of FoundationNetworking; see Tests/PlatformShimsTests.
import AppleShims
#elseif canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How the transport answers an HTTP authentication challenge (a 401 or 407 with `WWW-Authenticate: Basic`,
/// Digest, …): it never answers one, the library's own errors do.
///
/// On Linux the obvious answers all fail: default handling leaves the task waiting until its deadline (a wrong
/// client secret looked like a 30 s outage), a credential — even an empty one — makes URLSession send the request
/// again in a tight loop, and cancelling ends the task at once but drops the body. So on Linux the challenge is
/// cancelled and the 401's status and headers are kept, to be handed back as the answer without its body
/// (`URLSessionTransport` and `SessionDelegate` do that). Apple's URLSession completes the task with the 401 and
/// its body under default handling, so there it is left alone; server-trust (TLS) challenges always are.
enum AuthChallenge {
    /// The disposition for `challenge` (with the credential a trusted server gets), and the head to hand back
    /// instead of the cancelled task's error. `anchors` are extra certificate authorities (DER) for a server-trust
    /// challenge on Apple platforms.
    static func answer(
        _ challenge: URLAuthenticationChallenge, anchors: [Data]
    ) -> (URLSession.AuthChallengeDisposition, URLCredential?, APIResponse?) {
        #if canImport(FoundationNetworking) && !PROFIREST_SHIMS
        // FoundationNetworking has no server-trust challenges: every challenge here is an HTTP one.
        if let failure = challenge.failureResponse {
            return (.cancelAuthenticationChallenge, nil, SessionDelegate.head(of: failure))
        }
        #else
        if let (disposition, credential) = ServerTrust.answer(challenge, anchors: anchors) {
            return (disposition, credential, nil)
        }
        #endif
        return (.performDefaultHandling, nil, nil)
    }
}
