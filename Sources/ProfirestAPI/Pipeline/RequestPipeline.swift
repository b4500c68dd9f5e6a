import Foundation

/// What the pipeline needs from the client's options, resolved once per client.
struct PipelineSettings: Sendable {
    var retries: Int
    var retryDelay: TimeInterval
    var maxRetryWait: TimeInterval
    var timeout: TimeInterval
    var language: String?
    var clock: @Sendable () -> Date
    /// Waits between attempts (the `sleep` option).
    var sleep: @Sendable (TimeInterval) async throws -> Void
    /// Bounds one attempt; real time unless a unit test drives it (see `AttemptDeadline`).
    var attemptTimer: @Sendable (TimeInterval) async throws -> Void
    /// 0..<1 for the backoff jitter.
    var random: @Sendable () -> Double
}

/// One call ready to go: everything but the per-attempt headers (tokens) is final.
struct OutgoingRequest: Sendable {
    var method: String
    var target: RequestTarget
    var headers: [String: String]
    var body: Data?
    /// Bodies the library holds in memory can be sent again; a body that cannot be replayed is sent once.
    var replayable: Bool = true
}

/// One request's life: pick the Idempotency-Key once, then loop attempts — authorize, send under a deadline,
/// classify, and retry what the reference's table allows (`RetryPolicy`), waiting per Retry-After or `Backoff`.
struct RequestPipeline: Sendable {
    let transport: any HTTPTransport
    let authorizer: any RequestAuthorizer
    let settings: PipelineSettings

    func execute(_ request: OutgoingRequest, options: RequestOptions) async throws -> HTTPResponse {
        let retries = max(0, options.retries ?? settings.retries)
        let timeout = options.timeout ?? settings.timeout
        var headers = request.headers
        if let key = IdempotencyKey.value(method: request.method, option: options.idempotencyKey, now: settings.clock()) {
            headers[IdempotencyKey.header] = key
        }
        let staff = try staffToken(options, target: request.target)
        if !request.target.isAPIOrigin, case .bearer = options.auth {
            throw ProfirestUsageError(
                "auth: .bearer is never sent to \(request.target.origin.host), which is not the API (\(request.target.url.absoluteString)); tokens go only to baseURL")
        }

        var retriesUsed = 0
        var refreshed = false
        var freshToken: String?
        while true {
            try Task.checkCancellation()
            var attemptHeaders = headers
            var sentToken: String?
            if request.target.isAPIOrigin {
                switch options.auth {
                case .none: sentToken = nil
                case .bearer(let token): sentToken = token
                case .auto:
                    if let token = freshToken {
                        sentToken = token
                    } else {
                        sentToken = try await authorizer.accessToken()
                    }
                }
                freshToken = nil
                if (sentToken != nil || staff.token != nil) && !request.target.origin.mayCarryTokens {
                    throw ProfirestUsageError(
                        "tokens are never sent over plain http to \(request.target.origin.host); use https (or a loopback address such as http://127.0.0.1:8080 for the sandbox)")
                }
                if let sentToken { attemptHeaders["Authorization"] = "Bearer \(sentToken)" }
                if let token = staff.token { attemptHeaders["Profirest-Staff-Token"] = token }
            }
            // Built only when something failed: the success path allocates nothing for errors.
            let tokens = (sentToken, staff.token)
            var errors: ErrorFactory {
                ErrorFactory(language: settings.language, redaction: Redaction(secrets: [tokens.0, tokens.1].compactMap { $0 }))
            }
            let httpRequest = HTTPRequest(
                method: request.method, url: request.target.url, headers: attemptHeaders, body: request.body,
                timeout: timeout)

            let failure: ProfirestAPIError
            do {
                let response: HTTPResponse
                if transport is BoundsEachAttempt {
                    response = try await transport.send(httpRequest)
                } else {
                    response = try await AttemptDeadline.run(timeout: timeout, timer: settings.attemptTimer) {
                        [transport] in try await transport.send(httpRequest)
                    }
                }
                switch response.status {
                case 200..<300, 304:
                    if staff.fromSession, let token = staff.token { authorizer.staffRequestSucceeded(token: token) }
                    return response
                case 300..<400:
                    throw errors.redirect(response)
                default:
                    failure = errors.fromResponse(response, now: settings.clock())
                }
            } catch let error as ProfirestAPIError {
                throw error
            } catch {
                if Task.isCancelled || error is CancellationError { throw CancellationError() }
                failure = error is AttemptDeadline.Expired
                    ? errors.make(ErrorCode.timeout, detail: "no complete answer within \(timeout) s (one attempt, body included)")
                    : errors.fromTransport(error)
            }

            if failure.status == 401, failure.code == ErrorCode.invalidToken, !refreshed, case .auto = options.auth,
                let rejected = sentToken
            {
                // One refresh and one more try, not counted as a retry. Only a request that carried a token can
                // have been rejected for it; the authorizer knows whether that token is still the current one.
                refreshed = true
                guard let token = try await authorizer.refresh(afterRejecting: rejected) else { throw failure }
                freshToken = token
                continue
            }
            if failure.status == 401, failure.code == ErrorCode.staffSessionExpired, staff.fromSession,
                let token = staff.token
            {
                authorizer.staffRejected(token: token)
            }
            guard let wait = retryWait(failure, retriesUsed: retriesUsed, retries: retries, replayable: request.replayable)
            else { throw failure }
            retriesUsed += 1
            try await settings.sleep(wait)
            try Task.checkCancellation()
        }
    }

    /// The wait before the next attempt, or nil when the failure goes to the caller.
    func retryWait(_ failure: ProfirestAPIError, retriesUsed: Int, retries: Int, replayable: Bool) -> TimeInterval? {
        guard failure.retryable, retriesUsed < retries, replayable else { return nil }
        if let seconds = failure.retryAfter {
            // Longer than we may wait: no waiting at all, the error (with its seconds) goes to the caller.
            return Double(seconds) > settings.maxRetryWait ? nil : Double(seconds)
        }
        return Backoff.delay(retry: retriesUsed, base: settings.retryDelay, unit: settings.random())
    }

    /// The staff token this call sends, per the `staff` option; `.required` without a session fails before
    /// anything is sent.
    private func staffToken(_ options: RequestOptions, target: RequestTarget) throws -> (token: String?, fromSession: Bool) {
        if !target.isAPIOrigin {
            switch options.staff {
            case .required, .token:
                throw ProfirestUsageError(
                    "the staff token is never sent to \(target.origin.host), which is not the API; use a path relative to /v2")
            case .auto, .none:
                return (nil, false)
            }
        }
        switch options.staff {
        case .none: return (nil, false)
        case .token(let token): return (token, false)
        case .auto:
            let token = authorizer.staffToken()
            return (token, token != nil)
        case .required:
            guard let token = authorizer.staffToken() else {
                throw ErrorFactory(language: settings.language, redaction: Redaction(secrets: [])).make(
                    ErrorCode.staffSessionRequired,
                    detail: "this request needs a signed-in employee (signInStaff); nothing was sent")
            }
            return (token, true)
        }
    }
}
