import Foundation

/// The API's base address, parsed once: where paths go and which origin may receive tokens.
///
/// Refused, with a usage error that says what to write instead: anything but an absolute http(s) URL; user
/// information (credentials never ride in a URL: the library authenticates with OAuth tokens); a query or a
/// fragment; and a path ending in `/v2`, which the library adds itself (every call would otherwise go to
/// `/v2/v2/…`). A path before that (`https://gateway.example/profirest`) is kept.
struct APIBase: Sendable {
    /// `baseURL` as parsed, without a trailing slash, e.g. `https://api.mujprofirest.cz`.
    let root: String
    let origin: Origin

    init(baseURL: String) throws {
        let shown = Origin.redactingUserInfo(baseURL)
        var text = baseURL.trimmingCharacters(in: .whitespaces)
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URL(string: text) else {
            throw ProfirestUsageError(
                "baseURL \"\(shown)\" is not an http(s) address; use e.g. https://api.mujprofirest.cz or http://127.0.0.1:8080")
        }
        if url.user(percentEncoded: true) != nil || url.password(percentEncoded: true) != nil {
            throw ProfirestUsageError(
                "baseURL \"\(shown)\" carries a user name or password; credentials never go in a URL: write the "
                    + "address without them and let the library authenticate with its tokens")
        }
        guard let origin = Origin(url) else {
            throw ProfirestUsageError(
                "baseURL \"\(shown)\" is not an http(s) address; use e.g. https://api.mujprofirest.cz or http://127.0.0.1:8080")
        }
        if url.query(percentEncoded: true) != nil || url.fragment(percentEncoded: true) != nil {
            throw ProfirestUsageError(
                "baseURL \"\(shown)\" has a query or a fragment; write only the server's address, e.g. "
                    + "\(origin.scheme)://\(origin.hostAndPort)")
        }
        let path = url.path(percentEncoded: true)
        if path.lowercased() == "/v2" || path.lowercased().hasSuffix("/v2") {
            throw ProfirestUsageError(
                "baseURL \"\(shown)\" ends in /v2, which the library adds to every path; write \"\(text.dropLast(3))\"")
        }
        var root = url.absoluteString
        while root.hasSuffix("/") { root.removeLast() }
        self.root = root
        self.origin = origin
    }
}
