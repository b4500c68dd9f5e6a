import Foundation

/// The request pipeline's `RequestAuthorizer`: the access token from the `TokenRefresher` (stored tokens refreshed
/// once across processes, or a fixed `accessToken`) and the staff token from `StaffSessions`, asked directly.
///
/// It also turns the identity layer's failures into the errors a request throws, so that every API call fails
/// with a `ProfirestAPIError` whose `code` the app can switch on:
///
/// | identity failure                         | request error |
/// |------------------------------------------|---------------|
/// | `AuthFailure.notPaired`                  | `not_paired` (401) |
/// | `AuthFailure.refreshLimit`               | `invalid_token` (401), not retryable, `retryAfter` = seconds until the guard reopens |
/// | `ProfirestOAuthError` from a refresh      | `invalid_token` (401), the OAuth code in the detail (tokens kept: `invalid_client` is temporary) |
/// | usage and transport errors               | unchanged |
struct IdentityAuthorizer: RequestAuthorizer {
    let refresher: TokenRefresher
    let staffSessions: StaffSessions
    /// True without a clientID: such a client can never pair (see `accessToken()`).
    let anonymous: Bool
    let clock: @Sendable () -> Date
    let errors: ErrorFactory

    init(identity: Identity, errors: ErrorFactory) {
        refresher = identity.refresher
        staffSessions = identity.staffSessions
        anonymous = identity.context.clientID?.isEmpty ?? true
        clock = identity.context.clock
        self.errors = errors
    }

    func accessToken() async throws -> String? {
        do {
            return try await refresher.accessToken()
        } catch AuthFailure.notPaired where anonymous {
            // A client without a clientID can never pair, so "pair again" would be no advice: it is an anonymous
            // client (public endpoints, a proxy that authenticates, the benchmarks) and sends no Authorization.
            return nil
        } catch {
            throw map(error)
        }
    }

    func refresh(afterRejecting token: String) async throws -> String? {
        do {
            return try await refresher.refresh(afterRejecting: token)
        } catch {
            throw map(error)
        }
    }

    func staffToken() -> String? { staffSessions.staffToken(now: clock()) }
    func staffRequestSucceeded(token: String) { staffSessions.touch(token: token, now: clock()) }
    func staffRejected(token: String) { staffSessions.rejected(token: token) }

    /// The `not_paired` error: thrown by requests, and passed to `onUnpaired`.
    static func notPaired(_ errors: ErrorFactory) -> ProfirestAPIError {
        errors.make(ErrorCode.notPaired, detail: AuthFailure.notPaired.description)
    }

    func map(_ error: Error) -> Error {
        switch error {
        case AuthFailure.notPaired:
            return Self.notPaired(errors)
        case AuthFailure.refreshLimit(_, _, let retryAfter):
            // Not retryable: the library must not turn a refresh storm into a retry storm.
            return errors.make(
                ErrorCode.invalidToken, status: 401, detail: String(describing: error), retryAfter: retryAfter)
        case let oauth as ProfirestOAuthError:
            return errors.make(
                ErrorCode.invalidToken, status: 401,
                detail: "the access token could not be renewed: the token endpoint answered \(oauth.error) "
                    + "(\(oauth.message)); the stored tokens are kept")
        default:
            return error
        }
    }
}
