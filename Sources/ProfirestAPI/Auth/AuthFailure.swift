import Foundation

/// Failures of the identity layer that the request pipeline turns into its public errors. Internal so this layer
/// does not depend on the pipeline's `ProfirestAPIError`; the mapping belongs to the wiring step:
///
/// | case            | public error |
/// |-----------------|--------------|
/// | `notPaired`     | `ProfirestAPIError` code `not_paired`, status 401, not retryable |
/// | `refreshLimit`  | `ProfirestAPIError` code `invalid_token`, status 401, not retryable, `retryAfter` set |
enum AuthFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// No tokens (never paired, `unpair()`, or the server answered `invalid_grant`): pair again.
    case notPaired
    /// More refreshes than the storm guard allows in its window: the server keeps rejecting fresh tokens
    /// (a clock far off, a proxy stripping headers), and refreshing faster would not help.
    case refreshLimit(count: Int, window: Int, retryAfter: Int)

    var description: String {
        switch self {
        case .notPaired:
            return "The device is not paired (no tokens, or the server unpaired it); pair again."
        case .refreshLimit(let count, let window, let retryAfter):
            return "The access token was refreshed \(count) times within \(window) s and is still rejected; "
                + "stopped refreshing for \(retryAfter) s. Check the device clock and any proxy in between."
        }
    }
}

/// Misuse of the library (a call it cannot serve; nothing was sent). The public type is the pipeline's
/// `ProfirestUsageError(message)`; until the branches meet, this layer throws `IdentityUsageError` through this
/// single factory, so the wiring changes one line.
enum UsageFailure {
    static func make(_ message: String) -> any Error { IdentityUsageError(message: message) }
}

/// Stand-in for `ProfirestUsageError` until the pipeline is merged (see `UsageFailure`).
struct IdentityUsageError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    let message: String
    var description: String { "ProfirestUsageError: \(message)" }
    var errorDescription: String? { message }
}
