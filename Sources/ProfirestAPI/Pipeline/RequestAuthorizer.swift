import Foundation

/// The seam between the core and whoever holds the tokens.
///
/// The core asks it for the access token before every attempt of an API call and tells it what the server said
/// about the tokens; it never stores a token itself. The client's is `Identity` (Auth/); unit tests of the core plug
/// in their own. Calls that may have to send (a refresh) get the core to send with, so the authorizer holds no
/// reference back to it.
protocol RequestAuthorizer: Sendable {
    /// The access token for the next attempt, refreshed first if it is about to expire; nil sends no
    /// `Authorization`. Throws (e.g. `not_paired`) when a token is needed but cannot be had.
    func accessToken(core: Core) async throws -> String?

    /// Called once per call after `401 invalid_token` for a request that carried `token`. Returns the token to
    /// retry with — a fresh one, or one another request refreshed meanwhile — or nil when there is none, and
    /// then the 401 goes to the caller. Must coalesce concurrent refreshes.
    func refresh(afterRejecting token: String, core: Core) async throws -> String?

    /// The signed-in employee's token for `staff: .auto` and `.required`; nil when nobody is signed in.
    func staffToken(now: Date) -> String?

    /// A request with the session's `token` succeeded: extend the session's idle timeout. The token says which
    /// session: a request of a session that was replaced meanwhile must not extend the new one.
    func staffRequestSucceeded(token: String, now: Date)

    /// The server answered `401 staff_session_expired` to the session's `token`: forget that session (and call
    /// `onStaffExpired`), but not a newer one signed in meanwhile.
    func staffRejected(token: String)
}
