import Foundation

/// The tokens around an attempt, shared by whole-body requests (`execute`) and the event stream (`stream`): what
/// may be sent at all, the per-attempt token headers, and the one token refresh after `401 invalid_token`.
extension RequestPipeline {
    /// The staff token of a call, chosen once before its first attempt.
    struct StaffChoice: Sendable {
        var token: String?
        var fromSession: Bool
    }

    /// One attempt ready to go: its final headers and the tokens they carry (for redaction and the refresh rule).
    struct AuthorizedAttempt: Sendable {
        var headers: [String: String]
        var sentToken: String?
        var staff: StaffChoice
    }

    /// Whether this call already spent its one refresh, and the token it got from it.
    struct TokenRenewal: Sendable {
        var used = false
        var freshToken: String?
    }

    /// Checks what can be checked before anything is sent and picks the staff token.
    func admit(_ request: OutgoingRequest, options: RequestOptions) throws -> StaffChoice {
        let staff = try staffToken(options, target: request.target)
        if !request.target.isAPIOrigin, case .bearer = options.auth {
            throw ProfirestUsageError(
                "auth: .bearer is never sent to \(request.target.origin.host), which is not the API (\(request.target.url.absoluteString)); tokens go only to baseURL")
        }
        return StaffChoice(token: staff.token, fromSession: staff.fromSession)
    }

    /// The headers of the next attempt: the access token (a refreshed one after a rejection) and the staff token,
    /// only towards the API's own origin and never over plain http to a remote host.
    func authorize(
        _ request: OutgoingRequest, headers: [String: String], options: RequestOptions, staff: StaffChoice,
        renewal: inout TokenRenewal
    ) async throws -> AuthorizedAttempt {
        var attempt = AuthorizedAttempt(headers: headers, sentToken: nil, staff: staff)
        guard request.target.isAPIOrigin else { return attempt }
        switch options.auth {
        case .none: attempt.sentToken = nil
        case .bearer(let token): attempt.sentToken = token
        case .auto:
            if let token = renewal.freshToken {
                attempt.sentToken = token
            } else {
                attempt.sentToken = try await authorizer.accessToken()
            }
        }
        renewal.freshToken = nil
        if (attempt.sentToken != nil || staff.token != nil) && !request.target.origin.mayCarryTokens {
            throw ProfirestUsageError(
                "tokens are never sent over plain http to \(request.target.origin.host); use https (or a loopback address such as http://127.0.0.1:8080 for the sandbox)")
        }
        if let sentToken = attempt.sentToken { attempt.headers["Authorization"] = "Bearer \(sentToken)" }
        if let token = staff.token { attempt.headers["Profirest-Staff-Token"] = token }
        return attempt
    }

    /// A success extends the staff session whose token the attempt carried.
    func succeeded(_ attempt: AuthorizedAttempt) {
        if attempt.staff.fromSession, let token = attempt.staff.token { authorizer.staffRequestSucceeded(token: token) }
    }

    /// True when the call should go again at once with a refreshed token: the first `401 invalid_token` of a
    /// call that carried a token (not counted as a retry). Also forgets a staff session the server ended.
    func renew(
        after failure: ProfirestAPIError, attempt: AuthorizedAttempt, options: RequestOptions, renewal: inout TokenRenewal
    ) async throws -> Bool {
        if failure.status == 401, failure.code == ErrorCode.invalidToken, !renewal.used, case .auto = options.auth,
            let rejected = attempt.sentToken
        {
            // Only a request that carried a token can have been rejected for it; the authorizer knows whether that
            // token is still the current one.
            renewal.used = true
            guard let token = try await authorizer.refresh(afterRejecting: rejected) else { throw failure }
            renewal.freshToken = token
            return true
        }
        if failure.status == 401, failure.code == ErrorCode.staffSessionExpired, attempt.staff.fromSession,
            let token = attempt.staff.token
        {
            authorizer.staffRejected(token: token)
        }
        return false
    }
}
