import Foundation

/// The one object every exchange with the server goes through — API calls, the OAuth endpoints, revocations, outbox
/// deliveries and the event feed — built once per client from its options: the API's address, the transport, the
/// state store, the clock, sleep and observer, the retry schedule, and who holds the tokens.
///
/// `send(_:policy:)` is the library's one retry loop: per attempt it adds the tokens (only towards the API's own
/// origin, never over plain http to a remote host), performs it (`Exchange`), and by the call's `SendPolicy` renews
/// the access token once after `401 invalid_token`, waits and sends again, or throws. `openStream(_:policy:)` is
/// the same loop for the event stream.
final class Core: Sendable {
    /// The API's address; a usable one, or the usage error every call reports (the client's initializer does not
    /// throw, as the reference's examples show).
    let base: Result<APIBase, ProfirestUsageError>
    let transport: any HTTPTransport
    /// The connection's state document (tokens, pairing, event cursors).
    let store: StateStore
    /// Who holds the tokens: the client's `Identity`, or a unit test's own.
    let authorizer: any RequestAuthorizer
    /// The client's credentials at the token endpoint; nil without a `clientID`.
    let clientID: String?
    let clientSecret: String?
    /// `Accept-Language` of every call, for the language of error titles; nil sends none.
    let language: String?
    /// The limit of one attempt, body included.
    let timeout: TimeInterval
    /// The most bytes of one answer's body (`Options.maxResponseBytes`).
    let maxResponseBytes: Int
    /// How many times an API call's retryable failure is sent again.
    let retries: Int
    let schedule: RetrySchedule
    let clock: @Sendable () -> Date
    /// Waits between attempts (the `sleep` option); throws `CancellationError` when the task is cancelled.
    let sleep: @Sendable (TimeInterval) async throws -> Void
    /// Bounds one attempt; real time unless a unit test drives it (see `AttemptDeadline`).
    let attemptTimer: @Sendable (TimeInterval) async throws -> Void
    /// The `observer` option; nil when nobody listens, so nothing is built for it.
    let observe: (@Sendable (ProfirestEvent) -> Void)?
    /// The server's time as its answers' `Date` headers tell it.
    let serverClock = ServerClock()
    /// The `maxResponseBytes` option's default, 64 MiB: an API page is kilobytes; a larger answer is a download,
    /// which raises the limit per request.
    static let defaultMaxResponseBytes = 64 << 20

    init(
        base: Result<APIBase, ProfirestUsageError>, transport: any HTTPTransport, store: StateStore,
        authorizer: any RequestAuthorizer, clientID: String? = nil, clientSecret: String? = nil,
        language: String? = nil, timeout: TimeInterval = 30,
        maxResponseBytes: Int = Core.defaultMaxResponseBytes, retries: Int = 3,
        schedule: RetrySchedule = RetrySchedule(),
        clock: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = RealTime.sleep,
        attemptTimer: @escaping @Sendable (TimeInterval) async throws -> Void = RealTime.sleep,
        observe: (@Sendable (ProfirestEvent) -> Void)? = nil
    ) {
        self.base = base
        self.transport = transport
        self.store = store
        self.authorizer = authorizer
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.language = language
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
        self.retries = max(0, retries)
        self.schedule = schedule
        self.clock = clock
        self.sleep = sleep
        self.attemptTimer = attemptTimer
        self.observe = observe
    }

    /// The error factory in the client's language, blanking `secrets` (the tokens and form secrets of an attempt)
    /// wherever a server echoes them.
    func errors(scrubbing secrets: [String] = []) -> ErrorFactory {
        ErrorFactory(language: language, redaction: Redaction(secrets: secrets))
    }

    /// Whether the transport can read a response in pieces (the event stream).
    var canStream: Bool { transport is any StreamingHTTPTransport }

    /// Notes the server's time from an answer's `Date` and tells the observer, once, of a device clock more than a
    /// minute off; returns the device's time of the answer.
    @discardableResult
    func noteServerTime(_ headers: [String: String]) -> Date {
        let now = clock()
        if let offset = serverClock.note(headers, deviceNow: now) { observe?(.clockOffset(seconds: offset)) }
        return now
    }

    // MARK: Sending

    /// Sends `request` by `policy` until it succeeds or fails for good; returns the 2xx (or 304) answer.
    func send(_ request: OutgoingRequest, policy: SendPolicy) async throws -> APIResponse {
        guard case .whole(let response) = try await run(request, policy: policy, streamIdle: nil) else {
            preconditionFailure("a whole answer was asked for")
        }
        return response
    }

    /// Opens the event stream: its head once the server answered 2xx, the body still arriving. One attempt, and one
    /// more after a token renewal; the feed decides when to reconnect. `idleTimeout` is the reader's idle limit.
    func openStream(_ request: OutgoingRequest, policy: SendPolicy, idleTimeout: TimeInterval) async throws
        -> HTTPStreamingResponse
    {
        guard case .stream(let head) = try await run(request, policy: policy, streamIdle: idleTimeout) else {
            preconditionFailure("a stream was asked for")
        }
        return head
    }

    private enum Delivered {
        case whole(APIResponse)
        case stream(HTTPStreamingResponse)
    }

    /// The loop. `streamIdle` nil: a whole answer; otherwise a stream whose transport-level limit is that long.
    private func run(_ request: OutgoingRequest, policy: SendPolicy, streamIdle: TimeInterval?) async throws -> Delivered {
        let timeout = policy.api?.timeout ?? self.timeout
        let staff = try policy.api.map { try admit(request, options: $0) } ?? StaffChoice()
        var renewal = TokenRenewal()
        var retriesUsed = 0
        var number = 0
        let started = clock()
        while true {
            try Task.checkCancellation()
            let tokens = try await authorize(request, options: policy.api, staff: staff, renewal: &renewal)
            let httpRequest = HTTPRequest(
                method: request.method, url: request.target.url, headers: tokens.headers, body: request.body,
                timeout: streamIdle.map { max(timeout, $0) } ?? timeout,
                maxResponseBytes: streamIdle == nil ? policy.api?.maxResponseBytes ?? maxResponseBytes : nil)
            number += 1
            let observed = observe.map { observe in
                Observed(observe: observe, level: policy.observation, attempt: ProfirestEvent.Attempt(
                    method: request.method, path: request.target.url.path, number: number,
                    idempotencyKey: request.headers[RequestOptions.IdempotencyKey.header]))
            }
            observed?.started()

            let attempt = Exchange(core: self, timeout: timeout, secrets: tokens.secrets + policy.secrets)
            let failure: any Error
            var answeredStatus = 0
            do {
                switch try await attempt.perform(httpRequest, streamed: streamIdle != nil) {
                case .succeeded(let response) where streamIdle == nil:
                    succeeded(tokens)
                    // Scrubbed (a server that echoes the request may put a token there), and only when someone listens:
                    // `observed?.` evaluates no argument when nobody does.
                    observed?.finished(
                        status: response.status, error: nil,
                        requestID: response.header("Profirest-Request-Id").map(attempt.errors.redaction.scrub))
                    return .whole(response)
                case .succeeded(let response):
                    failure = attempt.errors.make(
                        ErrorCode.invalidResponse, status: response.status,
                        detail: "HTTP \(response.status) instead of a stream", requestID: response.header("Profirest-Request-Id"))
                case .streaming(let head) where streamIdle != nil:
                    succeeded(tokens)
                    return .stream(head)
                case .streaming(let head):
                    await head.body.close()
                    failure = attempt.errors.make(ErrorCode.invalidResponse, detail: "a stream instead of an answer")
                case .failed(let error, let answer):
                    answeredStatus = answer?.status ?? 0
                    if let answer, let read = policy.readsErrorAnswer, let own = read(answer, attempt.errors) {
                        failure = own
                    } else if answer != nil, policy.api != nil {
                        failure = ScopeHint.annotated(error, method: request.method, url: request.target.url)
                    } else {
                        failure = error
                    }
                }
            } catch {
                // A redirect: the answer's status; a cancellation or an error made below: no answer.
                let thrown = error as? ProfirestAPIError
                let status = thrown?.code == ErrorCode.unexpectedRedirect ? thrown?.status ?? 0 : 0
                observed?.finished(status: status, error: thrown, requestID: thrown?.requestID)
                throw error
            }
            let failed = failure as? ProfirestAPIError
            observed?.finished(status: answeredStatus, error: failed, requestID: failed?.requestID)
            guard let failed else { throw failure }

            if try await renew(after: failed, tokens: tokens, options: policy.api, renewal: &renewal) { continue }
            guard request.replayable, Repetition.mayRepeat(request, after: failed),
                let wait = policy.wait(after: failed, retriesUsed: retriesUsed, schedule: schedule)
            else {
                throw UnreachedServer.located(failed, url: request.target.url, attempts: number, since: started, now: clock())
            }
            observed?.retry(after: wait, reason: failed.retryAfter != nil ? .retryAfter : .backoff)
            retriesUsed += 1
            try await sleep(wait)
            try Task.checkCancellation()
        }
    }

    // MARK: Tokens

    /// The staff token of a call, chosen once before its first attempt.
    private struct StaffChoice: Sendable {
        var token: String?
        var fromSession = false
    }

    /// One attempt's final headers and the tokens they carry (for redaction and the refresh rule).
    private struct AttemptTokens: Sendable {
        var headers: [String: String]
        var accessToken: String?
        var staff: StaffChoice

        var secrets: [String] { [accessToken, staff.token].compactMap { $0 } }
    }

    /// Whether this call already spent its one refresh, and the token it got from it.
    private struct TokenRenewal: Sendable {
        var used = false
        var freshToken: String?
    }

    /// Checks what can be checked before anything is sent, and picks the staff token per the `staff` option;
    /// `.required` without a session fails before anything is sent.
    private func admit(_ request: OutgoingRequest, options: RequestOptions) throws -> StaffChoice {
        let target = request.target
        if !target.isAPIOrigin {
            if case .bearer = options.auth {
                throw ProfirestUsageError(
                    "auth: .bearer is never sent to \(target.origin.host), which is not the API (\(Origin.redactingUserInfo(target.url.absoluteString))); tokens go only to baseURL")
            }
            switch options.staff {
            case .required, .token:
                throw ProfirestUsageError(
                    "the staff token is never sent to \(target.origin.host), which is not the API; use a path relative to /v2")
            case .auto, .none:
                return StaffChoice()
            }
        }
        switch options.staff {
        case .none: return StaffChoice()
        case .token(let token): return StaffChoice(token: token)
        case .auto:
            let token = authorizer.staffToken(now: clock())
            return StaffChoice(token: token, fromSession: token != nil)
        case .required:
            guard let token = authorizer.staffToken(now: clock()) else {
                throw errors().make(
                    ErrorCode.staffSessionRequired,
                    detail: "this request needs a signed-in employee (signInStaff); nothing was sent")
            }
            return StaffChoice(token: token, fromSession: true)
        }
    }

    /// The headers of the next attempt: for an API call, the access token (a refreshed one after a rejection) and
    /// the staff token, only towards the API's own origin and never over plain http to a remote host.
    private func authorize(
        _ request: OutgoingRequest, options: RequestOptions?, staff: StaffChoice, renewal: inout TokenRenewal
    ) async throws -> AttemptTokens {
        var tokens = AttemptTokens(headers: request.headers, accessToken: nil, staff: staff)
        guard let options, request.target.isAPIOrigin else { return tokens }
        switch options.auth {
        case .none: break
        case .bearer(let token): tokens.accessToken = token
        case .auto:
            if let fresh = renewal.freshToken {
                tokens.accessToken = fresh
            } else {
                tokens.accessToken = try await authorizer.accessToken(core: self)
            }
        }
        renewal.freshToken = nil
        if (tokens.accessToken != nil || staff.token != nil) && !request.target.origin.mayCarrySecrets {
            throw ProfirestUsageError(
                "tokens are never sent over plain http to \(request.target.origin.host); use https (or a loopback address such as http://127.0.0.1:8080 for the sandbox)")
        }
        if let token = tokens.accessToken { tokens.headers["Authorization"] = "Bearer \(token)" }
        if let token = staff.token { tokens.headers["Profirest-Staff-Token"] = token }
        return tokens
    }

    /// A success extends the staff session whose token the attempt carried.
    private func succeeded(_ tokens: AttemptTokens) {
        if tokens.staff.fromSession, let token = tokens.staff.token {
            authorizer.staffRequestSucceeded(token: token, now: clock())
        }
    }

    /// True when the call should go again at once with a refreshed token: the first `401 invalid_token` of a call
    /// that carried a token (not counted as a retry). Also forgets a staff session the server ended.
    private func renew(
        after failure: ProfirestAPIError, tokens: AttemptTokens, options: RequestOptions?, renewal: inout TokenRenewal
    ) async throws -> Bool {
        guard failure.status == 401, let options else { return false }
        if failure.code == ErrorCode.invalidToken, !renewal.used, case .auto = options.auth,
            let rejected = tokens.accessToken
        {
            // Only a request that carried a token can have been rejected for it; the authorizer knows whether that
            // token is still the current one.
            renewal.used = true
            guard let token = try await authorizer.refresh(afterRejecting: rejected, core: self) else { throw failure }
            renewal.freshToken = token
            return true
        }
        if failure.code == ErrorCode.staffSessionExpired, tokens.staff.fromSession, let token = tokens.staff.token {
            authorizer.staffRejected(token: token)
        }
        return false
    }
}

/// One attempt as the `observer` hears of it: started, finished with its duration, a retry scheduled.
private struct Observed {
    let observe: @Sendable (ProfirestEvent) -> Void
    let level: SendPolicy.Observation
    let attempt: ProfirestEvent.Attempt
    let start = DispatchTime.now().uptimeNanoseconds

    func started() {
        if case .attemptsAndRetries = level { observe(.attemptStarted(attempt)) }
    }

    func finished(status: Int, error: ProfirestAPIError?, requestID: String?) {
        guard case .attemptsAndRetries = level else { return }
        let duration = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        // `requestID` is scrubbed of the attempt's tokens: an error's by the error factory, a success's by the caller.
        observe(.attemptFinished(attempt, ProfirestEvent.AttemptResult(
            status: status, duration: duration, requestID: requestID, errorCode: error?.code)))
    }

    func retry(after delay: TimeInterval, reason: ProfirestEvent.RetryReason) {
        if case .nothing = level { return }
        observe(.retryScheduled(attempt, delay: delay, reason: reason))
    }
}

// What `print`, `dump` and debugger summaries show of a core: where it sends and how, never the client secret, a
// token or the transport's insides.
extension Core: CustomStringConvertible, CustomReflectable {
    var description: String {
        let address = (try? base.get().root) ?? "unusable baseURL"
        return "Core(\(address), clientID: \(clientID ?? "none"), confidential: \(clientSecret != nil), "
            + "transport: \(type(of: transport)), \(store.location))"
    }
    var customMirror: Mirror { Mirror(self, children: ["summary": description]) }
}

/// How `Core.send` treats one kind of call: whether it carries the API's tokens, how often and after which waits a
/// failure is sent again, what the observer hears, and how an error answer is read. Every retry the library makes
/// is decided here and looped in one place (`Core.send`); which failures are worth another attempt is the error
/// catalog's `retryable` column (`ProfirestAPIError.isRetryable`).
///
/// | policy            | tokens | retries                                   | observer hears        |
/// |-------------------|--------|-------------------------------------------|-----------------------|
/// | `apiCall`         | yes    | the client's `retries` (or the call's), by the schedule | attempts and retries |
/// | `stream`          | yes    | none (the feed decides when to reconnect) | nothing               |
/// | `tokenRequest`    | no     | 2, after 1 s and 2 s (the storage lock is held meanwhile) | nothing   |
/// | `revocation`      | no     | as many as asked, by the schedule         | retries               |
/// | `oauthOnce`       | no     | none: its caller decides (pairing polls, a consent is completed again) | nothing |
///
/// The outbox sends each write as an `apiCall` without retries of its own, and keeps or refuses what failed by
/// `keepsWriteWaiting`; the outbox between its rounds and the event feed after an error wait by the same
/// `RetrySchedule` (`roundWait`).
struct SendPolicy: Sendable {
    enum Observation: Sendable {
        case attemptsAndRetries, retries, nothing
    }

    /// The options of an API call (tokens, staff token, timeout, retries); nil for the OAuth endpoints, which carry
    /// their own credentials and never a bearer token.
    var api: RequestOptions?
    /// How many times a retryable failure is sent again.
    var retries: Int
    /// Fixed waits before each retry instead of the schedule's doubling ones.
    var fixedWaits: [TimeInterval]?
    var observation: Observation
    /// Reads an error answer its own way (the OAuth endpoints' RFC 6749 bodies); nil for the catalog's problem
    /// documents. Gets the answer and the attempt's error factory; returns what to throw, nil to read it as a problem.
    var readsErrorAnswer: (@Sendable (APIResponse, ErrorFactory) -> (any Error)?)?
    /// What the call carries that no error may show besides its tokens: an OAuth form's secrets.
    var secrets: [String] = []

    /// A call of the API (`/v2/…`): tokens per `options`, retried by the client's table.
    static func apiCall(_ options: RequestOptions, retries: Int) -> SendPolicy {
        SendPolicy(api: options, retries: max(0, options.retries ?? retries), observation: .attemptsAndRetries)
    }

    /// The event stream's request: tokens, one renewal after `401 invalid_token`, no retries.
    static func stream(_ options: RequestOptions) -> SendPolicy {
        SendPolicy(api: options, retries: 0, observation: .nothing)
    }

    /// A token request (a refresh): sent again after 1 s and 2 s when it failed on the way. Safe although the refresh
    /// token is single-use: when the server rotated it and the answer was lost, the contract has it answer a replay
    /// of the just-rotated token, within its grace window, with the same new tokens.
    static func tokenRequest(secrets: [String], reads: @escaping @Sendable (APIResponse, ErrorFactory) -> (any Error)?)
        -> SendPolicy
    {
        SendPolicy(
            api: nil, retries: refreshWaits.count, fixedWaits: refreshWaits, observation: .nothing, readsErrorAnswer: reads,
            secrets: secrets)
    }

    /// Short: a refresh holds the storage lock while it waits.
    static let refreshWaits: [TimeInterval] = [1, 2]

    /// A revocation (RFC 7009): retried `retries` times by the schedule, each retry told to the observer.
    static func revocation(retries: Int, secrets: [String], reads: @escaping @Sendable (APIResponse, ErrorFactory) -> (any Error)?)
        -> SendPolicy
    {
        SendPolicy(api: nil, retries: retries, observation: .retries, readsErrorAnswer: reads, secrets: secrets)
    }

    /// An OAuth call sent once; its caller decides whether to send it again.
    static func oauthOnce(secrets: [String], reads: @escaping @Sendable (APIResponse, ErrorFactory) -> (any Error)?)
        -> SendPolicy
    {
        SendPolicy(api: nil, retries: 0, observation: .nothing, readsErrorAnswer: reads, secrets: secrets)
    }
}
