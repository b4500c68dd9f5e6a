import Foundation
import XCTest
@testable import ProfirestAPI

/// `Retries.swift`: which failures are worth another attempt (the catalog's retryable column), the waits before a
/// retry (`SendPolicy.wait`, `RetrySchedule`, `Backoff`) and between the rounds of the loops that never give up, and
/// which failures keep an outbox write waiting. (The loop that applies them: CoreTests.)
final class RetriesTests: XCTestCase {
    // MARK: Backoff and the retryable rows

    func testBackoffFormula() {
        XCTAssertEqual(Backoff.delay(retry: 0, base: 1, unit: 0.5), 1)
        XCTAssertEqual(Backoff.delay(retry: 3, base: 1, unit: 0.5), 8)
        XCTAssertEqual(Backoff.delay(retry: 10, base: 1, unit: 0.5), 30)
        XCTAssertEqual(Backoff.delay(retry: 10, base: 1, unit: 0), 22.5)
        XCTAssertEqual(Backoff.delay(retry: 10, base: 1, unit: 1), 37.5)
    }

    func testRetryPolicyRows() {
        XCTAssertTrue(ProfirestAPIError.isRetryable(code: ErrorCode.networkError, status: 0))
        XCTAssertTrue(ProfirestAPIError.isRetryable(code: ErrorCode.timeout, status: 0))
        XCTAssertTrue(ProfirestAPIError.isRetryable(code: ErrorCode.rateLimited, status: 429))
        XCTAssertFalse(ProfirestAPIError.isRetryable(code: ErrorCode.staffLocked, status: 429))
        XCTAssertTrue(ProfirestAPIError.isRetryable(code: ErrorCode.idempotencyInProgress, status: 409))
        XCTAssertFalse(ProfirestAPIError.isRetryable(code: ErrorCode.invalidToken, status: 401))
        XCTAssertFalse(ProfirestAPIError.isRetryable(code: ErrorCode.unexpectedRedirect, status: 302))
        for status in [500, 502, 503, 504] { XCTAssertTrue(ProfirestAPIError.isRetryable(code: "x", status: status)) }
    }

    // MARK: SendPolicy.keepsWriteWaiting: the outbox's keep or refuse

    /// Issue 20, 1: keep or refuse follows the catalog's retryable column — the rule the pipeline's retries read —
    /// plus the failures that came without the API's answer and the connection's own state. Every code of the
    /// catalog is checked against its row.
    func testKeepOrRefuseIsTheCatalogsRetryableColumnForEveryCode() {
        for (code, entry) in ErrorCatalog.entries {
            XCTAssertEqual(ProfirestAPIError.isRetryable(code: code, status: entry.status), entry.retryable, code)
            let error = ProfirestAPIError(code: code, status: entry.status, title: code, retryable: entry.retryable)
            let noAnswer = entry.status == 0 || (300...399).contains(entry.status) || entry.status >= 500
            let connection = [ErrorCode.invalidToken, ErrorCode.notPaired, ErrorCode.insufficientScope,
                              ErrorCode.proxyAuthenticationRequired].contains(code)
            XCTAssertEqual(SendPolicy.keepsWriteWaiting(error), entry.retryable || noAnswer || connection, code)
        }
        let locked = ProfirestAPIError(code: ErrorCode.staffLocked, status: 429, title: "locked", retryAfter: 300)
        XCTAssertFalse(SendPolicy.keepsWriteWaiting(locked), "a lock after wrong PINs is refused, not waited out")
        XCTAssertFalse(ProfirestAPIError.isRetryable(code: "quota_exceeded", status: 429), "an unknown 4xx is not retried")
        XCTAssertTrue(ProfirestAPIError.isRetryable(code: "database_on_fire", status: 503), "an unknown code by its status")
    }

    // MARK: SendPolicy.wait and RetrySchedule: the wait before each retry, and between the rounds that never give up

    private func failure(_ code: String, status: Int, retryAfter: Int? = nil) -> ProfirestAPIError {
        ProfirestAPIError(
            code: code, status: status, title: code, retryAfter: retryAfter,
            retryable: ProfirestAPIError.isRetryable(code: code, status: status))
    }

    private let schedule = RetrySchedule(retryDelay: 1, maxRetryWait: 30, random: { 0.5 })

    func testAnAPICallWaitsOnlyForARetryableFailureAndOnlyWithinItsRetries() {
        let unavailable = failure(ErrorCode.serviceUnavailable, status: 503)
        let policy = SendPolicy.apiCall(.init(), retries: 2)
        XCTAssertEqual(policy.wait(after: unavailable, retriesUsed: 0, schedule: schedule), 1)
        XCTAssertEqual(policy.wait(after: unavailable, retriesUsed: 1, schedule: schedule), 2)
        XCTAssertNil(policy.wait(after: unavailable, retriesUsed: 2, schedule: schedule), "the retries are used up")
        XCTAssertNil(policy.wait(after: failure(ErrorCode.notFound, status: 404), retriesUsed: 0, schedule: schedule))
        XCTAssertNil(policy.wait(after: failure(ErrorCode.staffLocked, status: 429, retryAfter: 5), retriesUsed: 0, schedule: schedule))
        // The call's own retries win over the client's; none below zero.
        XCTAssertNil(SendPolicy.apiCall(.init(retries: 0), retries: 5).wait(after: unavailable, retriesUsed: 0, schedule: schedule))
        XCTAssertEqual(SendPolicy.apiCall(.init(retries: 4), retries: 0).retries, 4)
        XCTAssertEqual(SendPolicy.apiCall(.init(retries: -3), retries: 5).retries, 0)
    }

    func testTheStreamAndAnOAuthCallSentOnceNeverWait() {
        let lost = failure(ErrorCode.networkError, status: 0)
        XCTAssertNil(SendPolicy.stream(.init()).wait(after: lost, retriesUsed: 0, schedule: schedule))
        XCTAssertNil(SendPolicy.oauthOnce(secrets: [], reads: { _, _ in nil }).wait(after: lost, retriesUsed: 0, schedule: schedule))
        let revocation = SendPolicy.revocation(retries: 1, secrets: [], reads: { _, _ in nil })
        XCTAssertEqual(revocation.wait(after: lost, retriesUsed: 0, schedule: schedule), 1, "a revocation by the schedule")
        XCTAssertNil(revocation.wait(after: lost, retriesUsed: 1, schedule: schedule))
    }

    /// A token request holds the storage lock while it waits: 1 s and 2 s, whatever the schedule or a Retry-After says.
    func testATokenRequestWaitsItsFixedOneAndTwoSeconds() {
        let policy = SendPolicy.tokenRequest(secrets: [], reads: { _, _ in nil })
        let slow = RetrySchedule(retryDelay: 10, maxRetryWait: 30, random: { 1 })
        let busy = failure(ErrorCode.serviceUnavailable, status: 503, retryAfter: 20)
        XCTAssertEqual(policy.wait(after: busy, retriesUsed: 0, schedule: slow), 1)
        XCTAssertEqual(policy.wait(after: busy, retriesUsed: 1, schedule: slow), 2)
        XCTAssertNil(policy.wait(after: busy, retriesUsed: 2, schedule: slow))
        XCTAssertNil(policy.wait(after: failure(ErrorCode.badRequest, status: 400), retriesUsed: 0, schedule: slow))
    }

    func testARetryAfterIsWaitedUpToMaxRetryWaitAndNotAtAllBeyond() {
        XCTAssertEqual(schedule.wait(after: failure(ErrorCode.rateLimited, status: 429, retryAfter: 0), retriesUsed: 2), 0)
        XCTAssertEqual(schedule.wait(after: failure(ErrorCode.rateLimited, status: 429, retryAfter: 30), retriesUsed: 0), 30)
        XCTAssertNil(schedule.wait(after: failure(ErrorCode.rateLimited, status: 429, retryAfter: 31), retriesUsed: 0))
        XCTAssertEqual(schedule.wait(after: failure(ErrorCode.rateLimited, status: 429), retriesUsed: 2), 4, "no Retry-After: backoff")
    }

    /// The rounds of the outbox and the event feed: the server's Retry-After up to the loop's longest, or the backoff
    /// up to its cap — jitter included, unlike a retry's wait.
    func testARoundWaitsTheRetryAfterUpToItsLongestOrTheBackoffUpToTheCap() {
        XCTAssertEqual(schedule.roundWait(retryAfter: 9, round: 0, longestRetryAfter: 300), 9)
        XCTAssertEqual(schedule.roundWait(retryAfter: 900, round: 0, longestRetryAfter: 300), 300)
        XCTAssertEqual(schedule.roundWait(retryAfter: nil, round: 0, longestRetryAfter: 300), 1)
        XCTAssertEqual(schedule.roundWait(retryAfter: nil, round: 3, longestRetryAfter: 300), 8)
        XCTAssertEqual(schedule.roundWait(retryAfter: nil, round: 10, longestRetryAfter: 300), 30)
        XCTAssertEqual(schedule.roundWait(retryAfter: nil, round: 10, longestRetryAfter: 300, cap: 60), 60)
        let high = RetrySchedule(retryDelay: 1, random: { 1 })
        XCTAssertEqual(high.roundWait(retryAfter: nil, round: 10, longestRetryAfter: 300), 30, "never past the cap")
        XCTAssertEqual(high.roundWait(retryAfter: nil, round: 0, longestRetryAfter: 300), 1.25)
    }
}
