import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// `Core.send`, the one retry loop: the reference's "Retries and outages" table, row by row, with exact attempts and
/// waits (its tokens: CoreTokenTests).
final class CoreTests: XCTestCase {
    // Row: network_error, timeout — retried, POST too, with the same Idempotency-Key.

    func testNetworkErrorIsRetriedThreeTimesThenReported() async {
        let h = Harness([.fail(URLError(.cannotConnectToHost)), .fail(URLError(.networkConnectionLost)),
                         .fail(URLError(.notConnectedToInternet)), .fail(URLError(.cannotFindHost))])
        let e = await apiError { try await h.api.post("/restaurants/11/quotes", body: ["a": 1]) }
        XCTAssertEqual(e?.code, ErrorCode.networkError)
        XCTAssertEqual(e?.status, 0)
        XCTAssertEqual(e?.retryable, true)
        XCTAssertEqual(h.requests.count, 4)
        XCTAssertEqual(h.sleeps.all, [1, 2, 4])
        let keys = Set(h.requests.map { $0.header("Idempotency-Key") })
        XCTAssertEqual(keys.count, 1)
        XCTAssertNotNil(keys.first!)
    }

    func testNetworkErrorThenSuccessReturnsTheAnswer() async throws {
        let h = Harness([.fail(URLError(.networkConnectionLost)), .json(201, ["id": "p1"])])
        let r: JSONValue = try await h.api.post("/restaurants/11/attendance/punches", body: ["id": "p1"])
        XCTAssertEqual(r["id"]?.stringValue, "p1")
        XCTAssertEqual(h.requests.count, 2)
        XCTAssertEqual(h.requests[0].body, h.requests[1].body)
        XCTAssertEqual(h.requests[0].header("Idempotency-Key"), h.requests[1].header("Idempotency-Key"))
    }

    func testAHangingAttemptEndsAtTheTimeoutAndIsRetriedWithTheSameKey() async throws {
        let h = Harness([.hang, .json(200, ["ok": true])], timeout: 12)
        let r: JSONValue = try await h.api.post("/restaurants/11/orders", body: ["x": 1])
        XCTAssertEqual(r["ok"]?.boolValue, true)
        XCTAssertEqual(h.requests.count, 2)
        XCTAssertEqual(h.timer.durations, [12, 12])
        XCTAssertEqual(h.requests[0].header("Idempotency-Key"), h.requests[1].header("Idempotency-Key"))
        XCTAssertEqual(h.sleeps.all, [1])
    }

    func testTimeoutAfterAllRetriesIsReportedAsTimeout() async {
        let h = Harness([.hang, .hang], retries: 1, timeout: 5)
        let e = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.timeout)
        XCTAssertEqual(e?.status, 0)
        XCTAssertEqual(e?.retryable, true)
        XCTAssertEqual(h.requests.count, 2)
    }

    func testTransportTimedOutErrorIsTheTimeoutCode() async {
        let h = Harness([.fail(URLError(.timedOut))], retries: 0)
        let e = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.timeout)
    }

    func testPerRequestTimeoutOverridesTheClients() async throws {
        let h = Harness([ok], timeout: 30)
        try await h.api.get("/connection", options: .init(timeout: 120))
        XCTAssertEqual(h.timer.durations, [120])
        XCTAssertEqual(h.last?.timeout, 120)
    }

    // Row: 429 rate_limited — retried after Retry-After.

    func testRateLimitedWaitsRetryAfterThenRetries() async throws {
        let h = Harness([.problem(429, ErrorCode.rateLimited, headers: ["Retry-After": "7"]), ok])
        try await h.api.get("/connection")
        XCTAssertEqual(h.requests.count, 2)
        XCTAssertEqual(h.sleeps.all, [7])
    }

    func testRateLimitedWithoutProblemBodyIsStillRetried() async throws {
        let h = Harness([.status(429, headers: ["Retry-After": "2"]), ok])
        try await h.api.get("/connection")
        XCTAssertEqual(h.sleeps.all, [2])
    }

    // Row: 409 idempotency_in_progress — retried.

    func testIdempotencyInProgressIsRetriedWithTheSameKey() async throws {
        let h = Harness([.problem(409, ErrorCode.idempotencyInProgress), ok])
        try await h.api.post("/restaurants/11/orders", body: ["a": 1])
        XCTAssertEqual(h.requests.count, 2)
        XCTAssertEqual(h.requests[0].header("Idempotency-Key"), h.requests[1].header("Idempotency-Key"))
        XCTAssertEqual(h.sleeps.all, [1])
    }

    func testOther409IsNotRetried() async {
        let h = Harness([.problem(409, ErrorCode.quoteAlreadyUsed, extra: ["existing_id": "ord_1"])])
        let e = await apiError { try await h.api.post("/restaurants/11/orders", body: ["a": 1]) }
        XCTAssertEqual(e?.code, ErrorCode.quoteAlreadyUsed)
        XCTAssertEqual(e?.existingID, "ord_1")
        XCTAssertEqual(e?.retryable, false)
        XCTAssertEqual(h.requests.count, 1)
        XCTAssertEqual(h.sleeps.all, [])
    }

    // Row: 500, 502, 503, 504 — retried.

    func testServerErrorsAreRetried() async throws {
        for status in [500, 502, 503, 504] {
            let h = Harness([.status(status), .status(status), ok])
            try await h.api.get("/connection")
            XCTAssertEqual(h.requests.count, 3, "status \(status)")
            XCTAssertEqual(h.sleeps.all, [1, 2], "status \(status)")
        }
    }

    func testOtherServerStatusesAreNotRetried() async {
        for status in [501, 505] {
            let h = Harness([.status(status)])
            let e = await apiError { try await h.api.get("/connection") }
            XCTAssertEqual(e?.code, ErrorCode.httpError)
            XCTAssertEqual(e?.status, status)
            XCTAssertEqual(h.requests.count, 1)
        }
    }

    func testRetriesStopAtTheRetriesOption() async {
        let h = Harness([.status(503), .status(503), .status(503)], retries: 2)
        let e = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.serviceUnavailable)
        XCTAssertEqual(h.requests.count, 3)
    }

    func testPerRequestRetriesZeroSendsOnce() async {
        let h = Harness([.status(503)])
        _ = await apiError { try await h.api.get("/connection", options: .init(retries: 0)) }
        XCTAssertEqual(h.requests.count, 1)
        XCTAssertEqual(h.sleeps.all, [])
    }

    // Row: 429 staff_locked and every other 4xx — never.

    func testStaffLockedIsNeverRetriedAndCarriesTheSeconds() async {
        let h = Harness([.problem(429, ErrorCode.staffLocked, headers: ["Retry-After": "300"], extra: ["retry_after": 300])])
        let e = await apiError { try await h.api.post("/restaurants/11/staff/sessions", body: ["x": 1]) }
        XCTAssertEqual(e?.code, ErrorCode.staffLocked)
        XCTAssertEqual(e?.retryAfter, 300)
        XCTAssertEqual(e?.retryable, false)
        XCTAssertEqual(h.requests.count, 1)
        XCTAssertEqual(h.sleeps.all, [])
    }

    func testStaffLockedRetryAfterFromTheProblemWhenNoHeader() async {
        let h = Harness([.problem(429, ErrorCode.staffLocked, extra: ["retry_after": 45])])
        let e = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(e?.retryAfter, 45)
    }

    func testOther4xxAreNeverRetried() async {
        for (status, code) in [(400, ErrorCode.badRequest), (403, ErrorCode.insufficientScope), (404, ErrorCode.notFound),
                               (422, ErrorCode.validationFailed), (410, ErrorCode.cursorExpired)] {
            let h = Harness([.problem(status, code)])
            let e = await apiError { try await h.api.get("/connection") }
            XCTAssertEqual(e?.code, code)
            XCTAssertEqual(h.requests.count, 1, code)
        }
    }

    // Backoff: retryDelay doubling up to 30 s with ±25 % jitter.

    func testBackoffDoublesFromRetryDelayUpToThirtySeconds() async {
        let h = Harness(Array(repeating: .status(503), count: 6), retries: 5, retryDelay: 4)
        _ = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(h.sleeps.all, [4, 8, 16, 30, 30])
    }

    func testJitterIsPlusMinusTwentyFivePercent() async {
        let low = Harness([.status(503), .status(503), .status(503)], retries: 2, random: 0)
        _ = await apiError { try await low.api.get("/connection") }
        XCTAssertEqual(low.sleeps.all, [0.75, 1.5])
        let high = Harness([.status(503), .status(503), .status(503)], retries: 2, random: 1)
        _ = await apiError { try await high.api.get("/connection") }
        XCTAssertEqual(high.sleeps.all, [1.25, 2.5])
    }

    // Retry-After wins; longer than maxRetryWait → no waiting, the error carries the seconds.

    func testRetryAfterWinsOverBackoff() async throws {
        let h = Harness([.status(503, headers: ["Retry-After": "3"]), .status(503, headers: ["Retry-After": "0"]), ok])
        try await h.api.get("/connection")
        XCTAssertEqual(h.sleeps.all, [3, 0])
    }

    func testRetryAfterAsHTTPDateInAllThreeForms() async throws {
        // Harness.now is 2026-09-21 14:13:20 GMT; each date is 20 s later.
        let dates = ["Mon, 21 Sep 2026 14:13:40 GMT", "Monday, 21-Sep-26 14:13:40 GMT", "Mon Sep 21 14:13:40 2026"]
        for date in dates {
            let h = Harness([.status(503, headers: ["Retry-After": date]), ok])
            try await h.api.get("/connection")
            XCTAssertEqual(h.sleeps.all, [20], date)
        }
    }

    func testRetryAfterLongerThanMaxRetryWaitIsNotWaitedFor() async {
        let h = Harness([.status(503, headers: ["Retry-After": "120"])], maxRetryWait: 30)
        let e = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.serviceUnavailable)
        XCTAssertEqual(e?.retryAfter, 120)
        XCTAssertEqual(h.requests.count, 1)
        XCTAssertEqual(h.sleeps.all, [])
    }

    func testRetryAfterEqualToMaxRetryWaitIsWaited() async throws {
        let h = Harness([.problem(429, ErrorCode.rateLimited, headers: ["Retry-After": "10"]), ok], maxRetryWait: 10)
        try await h.api.get("/connection")
        XCTAssertEqual(h.sleeps.all, [10])
    }

    // 3xx: unexpected_redirect, never followed, never retried.

    func testRedirectIsNeitherFollowedNorRetried() async {
        let h = Harness([.status(302, headers: ["Location": "https://evil.example/steal"])])
        let e = await apiError { try await h.api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.unexpectedRedirect)
        XCTAssertEqual(e?.status, 302)
        XCTAssertTrue(e?.detail?.contains("Location: https://evil.example/steal") == true)
        XCTAssertEqual(e?.retryable, false)
        XCTAssertEqual(h.requests.count, 1)
    }

    // Cancellation stops everything at once.

    func testCancellationDuringTheWaitStopsWithoutAnotherAttempt() async {
        let h = Harness([.status(503), ok])
        // The sleep runs in the calling task: cancel that task from inside it.
        h.sleeps.onSleep.withLock { $0 = { withUnsafeCurrentTask { $0?.cancel() } } }
        let task = Task { try await h.api.get("/connection") }
        await assertCancelled { _ = try await task.value }
        XCTAssertEqual(h.requests.count, 1)
        XCTAssertEqual(h.transport.remaining, 1)
    }

    func testCancellationDuringAnAttemptStopsAtOnce() async {
        // A transport that waits until cancelled and says when it has started: cancel in the middle of it.
        let started = Signal()
        let transport = ScriptedTransport { _ in
            started.raise()
            return .hang
        }
        let api = ProfirestApi(options: .init(transport: transport, sleep: { _ in }), authorizer: TestAuthorizer(token: nil))
        let task = Task { try await api.get("/connection") }
        await started.wait()
        task.cancel()
        await assertCancelled { _ = try await task.value }
        XCTAssertEqual(transport.requests.count, 1)
    }

    func testAlreadyCancelledTaskSendsNothing() async {
        let h = Harness([ok])
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await h.api.get("/connection")
        }
        await assertCancelled { _ = try await task.value }
        XCTAssertEqual(h.requests.count, 0)
    }

    // A body that cannot be replayed is not retried.

    func testANonReplayableBodyIsSentOnce() async throws {
        let timer = ManualTimer()
        let transport = ScriptedTransport([.status(503), ok], timer: timer)
        let base = try APIBase(baseURL: "https://api.mujprofirest.cz")
        let core = Core(
            base: .success(base), transport: transport, store: StateStore(storage: MemoryTokenStorage(), key: "k"),
            authorizer: TestAuthorizer(token: nil), language: "cs", retries: 3, schedule: RetrySchedule(random: { 0.5 }),
            clock: { Harness.now }, sleep: { _ in }, attemptTimer: { try await timer.wait($0) })
        let target = try RequestTarget.resolve("/backups", query: [:], base: base)
        let request = OutgoingRequest(method: "POST", target: target, headers: [:], body: Data("x".utf8), replayable: false)
        do {
            _ = try await core.send(request, policy: .apiCall(.init(), retries: core.retries))
            XCTFail("expected the 503")
        } catch let e as ProfirestAPIError {
            XCTAssertEqual(e.code, ErrorCode.serviceUnavailable)
        }
        XCTAssertEqual(transport.requests.count, 1)
    }
}

/// A one-shot signal for tests.
final class Signal: @unchecked Sendable {
    private let state = Locked<(raised: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func raise() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.raised = true
            defer { s.waiters = [] }
            return s.waiters
        }
        waiters.forEach { $0.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { s -> Bool in
                if s.raised { return true }
                s.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
