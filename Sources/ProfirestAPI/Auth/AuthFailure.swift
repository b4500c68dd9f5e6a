import Foundation

/// Failures of the identity layer that `Identity.requestError` turns into the public errors a request throws. Internal so this layer
/// does not depend on the request errors (`ProfirestAPIError`):
///
/// | case            | public error |
/// |-----------------|--------------|
/// | `notPaired`     | `ProfirestAPIError` code `not_paired`, status 401, not retryable |
/// | `refreshLimit`  | `ProfirestAPIError` code `invalid_token`, status 401, not retryable, `retryAfter` set |
enum AuthFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// No tokens (never paired or connected, `unpair()`, or the server answered `invalid_grant`): pair the device
    /// again, or connect the partner application again.
    case notPaired
    /// More refreshes than the storm guard allows in its window: the server keeps rejecting fresh tokens
    /// (a clock far off, a proxy stripping headers), and refreshing faster would not help.
    case refreshLimit(count: Int, window: Int, retryAfter: Int)

    var description: String {
        switch self {
        case .notPaired:
            return "Not paired or connected (no tokens, or the server ended the connection): pair the device again, "
                + "or connect the partner application again with authorizationURL."
        case .refreshLimit(let count, let window, let retryAfter):
            return "The access token was refreshed \(count) times within \(window) s and is still rejected; "
                + "stopped refreshing for \(retryAfter) s. Check the device clock and any proxy in between."
        }
    }
}
