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
    /// The `observer` option; nil when nobody listens, so nothing is built for it.
    var observe: (@Sendable (ProfirestEvent) -> Void)? = nil
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
/// The steps of one attempt are in RequestPipeline+Attempt.swift, shared with the event stream's entry
/// (RequestPipeline+Stream.swift).
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

            let sent: Result<HTTPResponse, any Error>
            do {
                if transport is BoundsEachAttempt {
                    sent = .success(try await transport.send(httpRequest))
                } else {
                    sent = .success(try await AttemptDeadline.run(timeout: timeout, timer: settings.attemptTimer) {
                        [transport] in try await transport.send(httpRequest)
                    })
                }
            } catch {
                sent = .failure(error)
            }

            let failed: ProfirestAPIError
            switch sent {
            case .failure(let error):
                do {
                    failed = try failure(of: error, attempt: attempt, timeout: timeout)
                } catch {
                    observed?.finished(status: 0, error: error as? ProfirestAPIError, requestID: nil)
                    throw error
                }
                observed?.finished(status: 0, error: failed, requestID: nil)
            case .success(let response):
                // Only when someone listens, and scrubbed: a server that echoes the request may put a token there.
                let requestID = observed == nil
                    ? nil : response.header("Profirest-Request-Id").map(errors(attempt).redaction.scrub)
                do {
                    guard let answered = try failure(of: response, attempt: attempt) else {
                        observed?.finished(status: response.status, error: nil, requestID: requestID)
                        return response
                    }
                    failed = ScopeHint.annotated(answered, method: request.method, url: request.target.url)
                } catch {
                    observed?.finished(status: response.status, error: error as? ProfirestAPIError, requestID: requestID)
                    throw error
                }
                observed?.finished(status: response.status, error: failed, requestID: requestID)
            }

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
        guard failure.retryable, retriesUsed < retries, replayable else { return nil }
        if let seconds = failure.retryAfter {
            // Longer than we may wait: no waiting at all, the error (with its seconds) goes to the caller.
            return Double(seconds) > settings.maxRetryWait ? nil : Double(seconds)
        }
        return Backoff.delay(retry: retriesUsed, base: settings.retryDelay, unit: settings.random())
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
                throw ErrorFactory(language: settings.language, redaction: Redaction(secrets: [])).make(
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
