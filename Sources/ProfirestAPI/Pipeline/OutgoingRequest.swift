import Foundation

/// One call ready to go: everything but the per-attempt headers (the tokens) is final.
struct OutgoingRequest: Sendable {
    var method: String
    var target: RequestTarget
    var headers: [String: String]
    var body: Data?
    /// Bodies the library holds in memory can be sent again; a body that cannot be replayed is sent once.
    var replayable: Bool = true
    /// The caller knows that this request, whatever its method, does no harm when the server gets it twice (the
    /// OAuth token and revocation requests, see `OAuthEndpoint`); otherwise `Repetition.safe` decides by method,
    /// Idempotency-Key and If-Match.
    var knownSafeToRepeat: Bool = false
}
