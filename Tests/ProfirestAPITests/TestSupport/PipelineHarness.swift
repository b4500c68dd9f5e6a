import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// One scripted answer: the tests' name for `ScriptedTransport.Reply` (ProfirestTestSupport), with the answers they
/// build most.
typealias Step = ScriptedTransport.Reply

extension ScriptedTransport.Reply {
    static func json(_ status: Int, _ body: JSONValue, headers: [String: String] = [:]) -> Step {
        var all = headers
        all["Content-Type"] = "application/json"
        return .respond(APIResponse(status: status, headers: all, data: try! JSONCoding.encode(body)))
    }

    static func problem(_ status: Int, _ code: String, headers: [String: String] = [:], extra: [String: JSONValue] = [:]) -> Step {
        var body: [String: JSONValue] = [
            "type": .string("https://api.mujprofirest.cz/problems/\(code)"), "title": .string("Title of \(code)"),
            "status": .integer(status), "code": .string(code), "request_id": "req_1",
        ]
        for (key, value) in extra { body[key] = value }
        var all = headers
        all["Content-Type"] = "application/problem+json"
        return .respond(APIResponse(status: status, headers: all, data: try! JSONCoding.encode(JSONValue.object(body))))
    }

    static func status(_ status: Int, headers: [String: String] = [:], body: String = "") -> Step {
        .respond(APIResponse(status: status, headers: headers, data: Data(body.utf8)))
    }
}

extension ScriptedTransport {
    /// The pipeline tests' transport: `steps` in order, one per request, and a request past their end fails the
    /// test. A `.hang` fires `timer` as it starts — the attempt's deadline passes in virtual time — and then waits
    /// to be cancelled (by that deadline).
    convenience init(_ steps: [Step], timer: ManualTimer) {
        self.init(
            steps,
            otherwise: { request in
                XCTFail("unexpected request \(request.method) \(request.url)")
                return .fail(URLError(.resourceUnavailable))
            },
            willReply: { _, reply in
                if case .hang = reply { timer.fire() }
            })
    }
}

/// The per-attempt timer under test control: it expires only when the transport hangs, so an immediate answer
/// always wins, deterministically, and no test waits in real time.
final class ManualTimer: @unchecked Sendable {
    private struct State {
        var pendingFires = 0
        var waiters: [Int: CheckedContinuation<Void, Error>] = [:]
        var next = 0
        var durations: [TimeInterval] = []
        var cancelled: Set<Int> = []
    }

    private let state = Locked(State())

    var durations: [TimeInterval] { state.withLock { $0.durations } }

    func fire() {
        let waiter: CheckedContinuation<Void, Error>? = state.withLock {
            if let key = $0.waiters.keys.min() { return $0.waiters.removeValue(forKey: key) }
            $0.pendingFires += 1
            return nil
        }
        waiter?.resume()
    }

    func wait(_ seconds: TimeInterval) async throws {
        let id: Int = state.withLock {
            $0.durations.append(seconds)
            $0.next += 1
            return $0.next
        }
        enum Action { case wait, fire, cancel }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                // Deciding and registering under one lock: a fire() in between would otherwise be lost.
                let action: Action = state.withLock {
                    if $0.cancelled.remove(id) != nil { return .cancel }
                    if $0.pendingFires > 0 {
                        $0.pendingFires -= 1
                        return .fire
                    }
                    $0.waiters[id] = continuation
                    return .wait
                }
                switch action {
                case .wait: break
                case .fire: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let waiter: CheckedContinuation<Void, Error>? = state.withLock {
                if let waiter = $0.waiters.removeValue(forKey: id) { return waiter }
                $0.cancelled.insert(id)
                return nil
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

/// The `sleep` option under test: records each wait and returns at once.
final class SleepRecorder: @unchecked Sendable {
    private let waits = Locked([TimeInterval]())
    /// Called inside each sleep, e.g. to cancel the calling task.
    let onSleep: Locked<(@Sendable () -> Void)?> = Locked(nil)

    var all: [TimeInterval] { waits.withLock { $0 } }

    func sleep(_ seconds: TimeInterval) async throws {
        waits.withLock { $0.append(seconds) }
        onSleep.withLock { $0 }?()
        try Task.checkCancellation()
    }
}

/// The one authorizer fake of the core's tests: a token (or none), what a refresh gives (nil: the 401 stands) or
/// throws, and a staff token; records what the core asked and told it.
final class TestAuthorizer: RequestAuthorizer, @unchecked Sendable {
    struct State {
        var token: String?
        var refreshTo: String?
        var staff: String?
        var rejectedTokens: [String] = []
        var staffSuccesses = 0
        var staffRejections = 0
    }

    let state: Locked<State>
    /// Thrown instead of a token (a device the server unpaired).
    let accessTokenFailure: ProfirestAPIError?
    /// Thrown by a refresh (a refresh that finds the device unpaired).
    let refreshFailure: ProfirestAPIError?

    /// - Parameters:
    ///   - token: the access token of every attempt; nil sends none.
    ///   - refreshTo: what a refresh after a 401 gives; nil: none, the 401 goes to the caller (a fixed token).
    ///   - staff: the signed-in employee's token.
    init(
        token: String?, refreshTo: String? = nil, staff: String? = nil, accessTokenFailure: ProfirestAPIError? = nil,
        refreshFailure: ProfirestAPIError? = nil
    ) {
        state = Locked(State(token: token, refreshTo: refreshTo, staff: staff))
        self.accessTokenFailure = accessTokenFailure
        self.refreshFailure = refreshFailure
    }

    /// A device the server unpaired: every token request fails with `not_paired`.
    static var unpaired: TestAuthorizer {
        TestAuthorizer(token: nil, accessTokenFailure: ErrorFactory(language: "en", redaction: Redaction(secrets: []))
            .make(ErrorCode.notPaired, detail: "pair again"))
    }

    /// A token the server rejects, and a refresh that finds the device unpaired.
    static var unpairing: TestAuthorizer {
        TestAuthorizer(token: "at_rejected", refreshFailure: ErrorFactory(language: "en", redaction: Redaction(secrets: []))
            .make(ErrorCode.notPaired, detail: "unpaired"))
    }

    func accessToken(core: Core) async throws -> String? {
        if let accessTokenFailure { throw accessTokenFailure }
        return state.withLock { $0.token }
    }
    func refresh(afterRejecting token: String, core: Core) async throws -> String? {
        if let refreshFailure { throw refreshFailure }
        return state.withLock {
            $0.rejectedTokens.append(token)
            if let fresh = $0.refreshTo { $0.token = fresh }
            return $0.refreshTo
        }
    }
    func staffToken(now: Date) -> String? { state.withLock { $0.staff } }
    func staffRequestSucceeded(token: String, now: Date) { state.withLock { $0.staffSuccesses += 1 } }
    func staffRejected(token: String) { state.withLock { $0.staffRejections += 1; $0.staff = nil } }
}

/// A client over a scripted transport with recorded sleeps, a fixed clock and pinned jitter.
struct Harness {
    let api: ProfirestApi
    let transport: ScriptedTransport
    let sleeps: SleepRecorder
    /// The per-attempt timer: fired by each `.hang`; `durations` are the attempts' limits.
    let timer: ManualTimer

    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    init(
        _ steps: [Step], baseURL: String = "https://api.mujprofirest.cz", accessToken: String? = nil,
        authorizer: (any RequestAuthorizer)? = nil, language: String? = "cs", retries: Int = 3,
        retryDelay: TimeInterval = 1, maxRetryWait: TimeInterval = 30, timeout: TimeInterval = 30,
        random: Double = 0.5
    ) {
        let timer = ManualTimer()
        let transport = ScriptedTransport(steps, timer: timer)
        let sleeps = SleepRecorder()
        let options = ProfirestApi.Options(
            baseURL: baseURL, accessToken: accessToken, language: language, retries: retries, retryDelay: retryDelay,
            maxRetryWait: maxRetryWait, timeout: timeout, transport: transport, clock: { Harness.now },
            sleep: { try await sleeps.sleep($0) })
        api = ProfirestApi(
            options: options, authorizer: authorizer ?? TestAuthorizer(token: accessToken),
            attemptTimer: { try await timer.wait($0) }, random: { random })
        self.transport = transport
        self.sleeps = sleeps
        self.timer = timer
    }

    var requests: [HTTPRequest] { transport.requests }
    var last: HTTPRequest? { transport.requests.last }
}

/// Runs `body` and returns the error of type `E` it throws, failing the test when it throws nothing or another error.
func thrown<E: Error>(
    _ type: E.Type, _ body: () async throws -> Void, file: StaticString = #filePath, line: UInt = #line
) async -> E? {
    do {
        try await body()
        XCTFail("expected a \(E.self), nothing was thrown", file: file, line: line)
    } catch let error as E {
        return error
    } catch {
        XCTFail("expected a \(E.self), got \(error)", file: file, line: line)
    }
    return nil
}

/// The `ProfirestAPIError` that `body` throws (a test failure when it throws nothing else).
func apiError(_ body: () async throws -> Void, file: StaticString = #filePath, line: UInt = #line) async -> ProfirestAPIError? {
    await thrown(ProfirestAPIError.self, body, file: file, line: line)
}

/// The `ProfirestUsageError` that `body` throws (a test failure when it throws nothing else).
func usageError(_ body: () async throws -> Void, file: StaticString = #filePath, line: UInt = #line) async -> ProfirestUsageError? {
    await thrown(ProfirestUsageError.self, body, file: file, line: line)
}

/// Fails the test unless `body` ends with a `CancellationError`.
func assertCancelled(_ body: () async throws -> Void, file: StaticString = #filePath, line: UInt = #line) async {
    _ = await thrown(CancellationError.self, body, file: file, line: line)
}

let ok = Step.json(200, ["ok": true])
