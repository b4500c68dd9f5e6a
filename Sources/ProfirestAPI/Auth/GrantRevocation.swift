import Foundation

/// Ends on the server (RFC 7009 `POST /oauth/revoke`) the grants this storage gave up: the refresh token of an
/// unpaired connection, or of one replaced by a new pairing or consent.
///
/// Such a token first moves to the state document's `pending_revocations`, in the same write that gives it up
/// (`StoredState.parkRefreshToken`), and leaves that list only when the server confirmed the revocation. A revoke
/// that fails — or a process that dies before it — is therefore tried again by the next unpair, disconnect, pairing
/// or consent, instead of leaving a grant alive that nobody holds any more.
struct GrantRevocation: Sendable {
    let core: Core
    let client: OAuthClient

    /// Revokes the pending tokens: `current` (the one just given up) with retries by the retry table, the older ones
    /// once each, since they had their retries when they were given up. Stops at the first failure that says the
    /// server cannot be reached, as the rest would only wait for the same. Each failure is reported to the observer;
    /// returns the first (the tokens not revoked stay pending), nil when none is left.
    func revokePending(current: String?, retrying: Bool = true) async -> (any Error)? {
        guard let pending = try? core.store.read().pendingRevocations, !pending.isEmpty else { return nil }
        let ordered = pending.filter { $0 == current } + pending.filter { $0 != current }
        var revoked: [String] = []
        var failure: (any Error)?
        for token in ordered {
            do {
                try await revoke(token, retries: token == current && retrying ? core.retries : 0)
                revoked.append(token)
            } catch {
                failure = failure ?? error
                if error is CancellationError { break }
                core.observe?(.revocationFailed(code: Self.code(of: error)))
                if (error as? ProfirestAPIError)?.retryable == true { break }
            }
        }
        if !revoked.isEmpty {
            // Another process may have parked more meanwhile: remove only what the server confirmed.
            let confirmed = Set(revoked)
            try? await core.store.updateAsync { $0.pendingRevocations.removeAll(where: confirmed.contains) }
        }
        return failure
    }

    /// One revocation, sent again `retries` times after a retryable failure (network_error, timeout, 429, 5xx).
    private func revoke(_ token: String, retries: Int) async throws {
        let form = client.form(["token": token, "token_type_hint": "refresh_token"])
        do {
            try await OAuthEndpoint(core: core).revoke(form: form, basicAuth: client.basicAuth, retries: retries)
        } catch let error as ProfirestOAuthError where error.error == "invalid_token" {
            // Unknown to the server (RFC 7009 2.2 answers 200 for it, some servers this): nothing left to end.
        }
    }

    /// The code `.revocationFailed` carries: the catalog's or the OAuth one, `network_error` for anything else.
    static func code(of error: any Error) -> String {
        (error as? ProfirestAPIError)?.code ?? (error as? ProfirestOAuthError)?.error ?? ErrorCode.networkError
    }
}
