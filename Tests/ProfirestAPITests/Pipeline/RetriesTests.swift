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
}
