import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Says where a call that got no answer was going and how hard the library tried: a `network_error` or `timeout`
/// detail names the host and port and the attempts made, so a wrong address or a closed port reads as such at first
/// contact instead of as seconds of silent retries.
///
/// Only the host and port are named: the URL's user information, path and query stay out of the error.
enum UnreachedServer {
    /// `error` with its detail saying where and how often, e.g. `could not connect to 127.0.0.1:9 after 4 attempts
    /// over 7.4 s (URLError -1004: …)`; any other error (an answer from the server, another code) as it is.
    static func located(
        _ error: ProfirestAPIError, url: URL, attempts: Int, since start: Date, now: Date
    ) -> ProfirestAPIError {
        guard error.status == 0, error.code == ErrorCode.networkError || error.code == ErrorCode.timeout else {
            return error
        }
        let seconds = max(0, now.timeIntervalSince(start))
        let tries = attempts == 1 ? "1 attempt" : "\(attempts) attempts"
        let took = String(format: "%.1f", seconds)
        var located = error
        let what = "\(verb(error)) \(endpoint(url)) after \(tries) over \(took) s"
        located.detail = error.detail.map { "\(what) (\($0))" } ?? what
        return located
    }

    /// `host:port`, the port the scheme implies when the URL names none; an IPv6 literal in brackets.
    static func endpoint(_ url: URL) -> String {
        var host = url.host ?? "?"
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        let port = url.port ?? (url.scheme?.lowercased() == "http" ? 80 : 443)
        return "\(host):\(port)"
    }

    /// What went wrong, in words that lead to the address.
    private static func verb(_ error: ProfirestAPIError) -> String {
        if error.code == ErrorCode.timeout { return "no complete answer from" }
        switch (error.underlyingError as? URLError)?.code {
        case .cannotConnectToHost?: return "could not connect to"
        case .cannotFindHost?, .dnsLookupFailed?: return "could not find the host of"
        case .networkConnectionLost?: return "lost the connection to"
        case .notConnectedToInternet?: return "no network to reach"
        case .secureConnectionFailed?: return "no TLS connection to"
        default: return "no answer from"
        }
    }
}
