import Foundation

/// A pairing or connection failure reported in OAuth terms (RFC 6749 5.2, RFC 8628 3.5): the manager refused
/// (`access_denied`), the code ran out (`expired_token`), the callback did not match the consent we started
/// (`invalid_state`, `invalid_issuer`), or the token endpoint refused the client (`invalid_client`, …).
///
/// Decide by `error`; `message` is for a person. Neither ever contains a token, a device code or a secret.
///
/// ```swift
/// catch let e as ProfirestOAuthError where e.error == "access_denied" { showRefused() }
/// ```
public struct ProfirestOAuthError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The OAuth error code, e.g. `access_denied`, `expired_token`, `invalid_grant`.
    ///
    /// ```swift
    /// switch e.error { … }
    /// ```
    public let error: String
    /// The server's `error_description` or the library's explanation, if any.
    ///
    /// ```swift
    /// e.detail ?? ""
    /// ```
    public let detail: String?

    /// An OAuth error with its RFC 6749 code, for tests and for apps that report one of their own.
    ///
    /// - Parameters:
    ///   - error: the RFC 6749 error code, such as `access_denied` or `invalid_grant`.
    ///   - detail: text for a person about this occurrence; nil for the code's own sentence.
    ///
    /// ```swift
    /// throw ProfirestOAuthError(error: "access_denied", detail: "The manager refused the code.")
    /// ```
    public init(error: String, detail: String? = nil) {
        self.error = error
        self.detail = detail
    }

    /// Text for a person: the detail when there is one, otherwise a sentence for the code.
    ///
    /// ```swift
    /// label.text = e.message
    /// ```
    public var message: String {
        if let detail, !detail.isEmpty { return detail }
        switch error {
        case "access_denied": return "The request was refused."
        case "expired_token": return "The code has expired; start again."
        case "authorization_pending": return "The code has not been confirmed yet."
        case "slow_down": return "Polling too often."
        case "invalid_grant": return "The grant is no longer valid; pair or connect again."
        case "invalid_client", "unauthorized_client": return "The client was not accepted by the server."
        case "invalid_state": return "The callback does not belong to the consent started by this client."
        case "invalid_issuer": return "The callback comes from another authorization server."
        default: return "The authorization failed (\(error))."
        }
    }

    /// `"ProfirestOAuthError(<error>): <message>"`.
    ///
    /// ```swift
    /// print(e)
    /// ```
    public var description: String { "ProfirestOAuthError(\(error)): \(message)" }

    /// The same as `message`.
    ///
    /// ```swift
    /// e.localizedDescription
    /// ```
    public var errorDescription: String? { message }
}
