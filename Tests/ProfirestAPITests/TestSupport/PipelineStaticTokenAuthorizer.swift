@testable import ProfirestAPI

/// A fixed access token that is never refreshed, or none at all; no staff sessions: for tests of the pipeline
/// without the identity layer.
struct StaticTokenAuthorizer: RequestAuthorizer {
    let token: String?

    func accessToken() async throws -> String? { token }
    // A fixed token cannot be renewed: the 401 goes to the caller, who gave us the token.
    func refresh(afterRejecting token: String) async throws -> String? { nil }
    func staffToken() -> String? { nil }
    func staffRequestSucceeded(token: String) {}
    func staffRejected(token: String) {}
}
