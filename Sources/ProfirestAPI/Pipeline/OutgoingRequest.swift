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

extension OutgoingRequest {
    /// The headers every request of the library starts with, API and OAuth calls alike: what it accepts, the
    /// User-Agent, and the language of error titles — nil sends none (the default transport also keeps Linux
    /// URLSession from adding one, see `URLSessionTransport`).
    static func standardHeaders(accept: String, language: String?) -> [String: String] {
        var headers = ["Accept": accept, "User-Agent": LibraryVersion.userAgent]
        if let language { headers["Accept-Language"] = language }
        return headers
    }
}
