import Foundation

/// One call ready to go: everything but the per-attempt headers (tokens) is final.
struct OutgoingRequest: Sendable {
    var method: String
    var target: RequestTarget
    var headers: [String: String]
    var body: Data?
    /// Bodies the library holds in memory can be sent again; a body that cannot be replayed is sent once.
    var replayable: Bool = true
}

/// One request's life: pick the Idempotency-Key once, then loop attempts — authorize, perform (`Attempt`), and
/// retry what the reference's table allows (`RetryPolicy`), waiting per Retry-After or `Backoff`, or renew the
/// access token once after `401 invalid_token`. Which tokens an attempt carries and what a 401 means to them is in
/// RequestPipeline+Tokens.swift, shared with the event stream's entry (RequestPipeline+Stream.swift).
struct RequestPipeline: Sendable {
    let transport: any HTTPTransport
    let authorizer: any RequestAuthorizer
    let settings: PipelineSettings

    func execute(_ request: OutgoingRequest, options: RequestOptions) async throws -> APIResponse {
        let retries = max(0, options.retries ?? settings.retries)
        let timeout = options.timeout ?? settings.timeout
        var headers = request.headers
        if let key = IdempotencyKey.value(method: request.method, option: options.idempotencyKey, now: settings.clock()) {
            headers[IdempotencyKey.header] = key
        }
        let staff = try admit(request, options: options)

        var retriesUsed = 0
        var renewal = TokenRenewal()
        var number = 0
        while true {
            try Task.checkCancellation()
            let attempt = try await authorize(request, headers: headers, options: options, staff: staff, renewal: &renewal)
            let httpRequest = HTTPRequest(
                method: request.method, url: request.target.url, headers: attempt.headers, body: request.body,
                timeout: timeout)
            number += 1
            let observed = settings.observe.map { observe in
                Observed(observe: observe, attempt: ProfirestEvent.Attempt(
                    method: request.method, path: request.target.url.path, number: number,
                    idempotencyKey: headers[IdempotencyKey.header]))
            }
            observed?.started()

            let exchange = Attempt(
                transport: transport, settings: settings, timeout: timeout,
                accessToken: attempt.sentToken, staffToken: attempt.staff.token)
            let failed: ProfirestAPIError
            var answeredStatus = 0
            do {
                switch try await exchange.perform(httpRequest) {
                case .succeeded(let response):
                    succeeded(attempt)
                    // Only when someone listens, and scrubbed: a server that echoes the request may put a token there.
                    observed?.finished(
                        status: response.status, error: nil,
                        requestID: observed == nil
                            ? nil : response.header("Profirest-Request-Id").map(exchange.errors.redaction.scrub))
                    return response
                case .streaming(let head):
                    await head.body.close()
                    failed = exchange.errors.make(ErrorCode.invalidResponse, detail: "a stream instead of an answer")
                case .failed(let error, let answer):
                    answeredStatus = answer?.status ?? 0
                    failed = answer == nil ? error : ScopeHint.annotated(error, method: request.method, url: request.target.url)
                }
            } catch {
                // A redirect: the answer's status; a cancellation or an error made below: no answer.
                let thrown = error as? ProfirestAPIError
                let status = thrown?.code == ErrorCode.unexpectedRedirect ? thrown?.status ?? 0 : 0
                observed?.finished(status: status, error: thrown, requestID: thrown?.requestID)
                throw error
            }
            observed?.finished(status: answeredStatus, error: failed, requestID: failed.requestID)

            if try await renew(after: failed, attempt: attempt, options: options, renewal: &renewal) { continue }
            guard let wait = retryWait(failed, retriesUsed: retriesUsed, retries: retries, replayable: request.replayable)
            else { throw failed }
            observed?.retry(after: wait, reason: failed.retryAfter != nil ? .retryAfter : .backoff)
            retriesUsed += 1
            try await settings.sleep(wait)
            try Task.checkCancellation()
        }
    }

    /// The wait before the next attempt, or nil when the failure goes to the caller.
    func retryWait(_ failure: ProfirestAPIError, retriesUsed: Int, retries: Int, replayable: Bool) -> TimeInterval? {
        guard replayable else { return nil }
        return settings.retrySchedule.wait(after: failure, retriesUsed: retriesUsed, limit: retries)
    }

    /// The staff token this call sends, per the `staff` option; `.required` without a session fails before
    /// anything is sent.
    func staffToken(_ options: RequestOptions, target: RequestTarget) throws -> (token: String?, fromSession: Bool) {
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
                throw settings.errors().make(
                    ErrorCode.staffSessionRequired,
                    detail: "this request needs a signed-in employee (signInStaff); nothing was sent")
            }
            return (token, true)
        }
    }
}

/// One attempt as the `observer` hears of it: started, finished with its duration, a retry scheduled.
struct Observed {
    let observe: @Sendable (ProfirestEvent) -> Void
    let attempt: ProfirestEvent.Attempt
    let start = DispatchTime.now().uptimeNanoseconds

    func started() { observe(.attemptStarted(attempt)) }

    func finished(status: Int, error: ProfirestAPIError?, requestID: String?) {
        let duration = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        // The error's request id is already scrubbed of the attempt's tokens; a success's comes from the server.
        observe(.attemptFinished(attempt, ProfirestEvent.AttemptResult(
            status: status, duration: duration, requestID: error?.requestID ?? (error == nil ? requestID : nil),
            errorCode: error?.code)))
    }

    func retry(after delay: TimeInterval, reason: ProfirestEvent.RetryReason) {
        observe(.retryScheduled(attempt, delay: delay, reason: reason))
    }
}
