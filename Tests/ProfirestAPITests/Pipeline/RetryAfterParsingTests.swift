import Foundation
import XCTest
@testable import ProfirestAPI

final class RetryAfterParsingTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 784_111_767)  // Sun, 06 Nov 1994 08:49:27 GMT

    func testDeltaSeconds() {
        XCTAssertEqual(RetryAfter.seconds("120", now: now), 120)
        XCTAssertEqual(RetryAfter.seconds(" 0 ", now: now), 0)
        XCTAssertNil(RetryAfter.seconds("-5", now: now))
        XCTAssertNil(RetryAfter.seconds("1.5", now: now))
        XCTAssertNil(RetryAfter.seconds(nil, now: now))
        XCTAssertNil(RetryAfter.seconds("soon", now: now))
    }

    func testTheThreeHTTPDateForms() {
        XCTAssertEqual(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:37 GMT", now: now), 10)
        XCTAssertEqual(RetryAfter.seconds("Sunday, 06-Nov-94 08:49:37 GMT", now: now), 10)
        XCTAssertEqual(RetryAfter.seconds("Sun Nov  6 08:49:37 1994", now: now), 10)
    }

    func testMalformedDatesAreUnreadableNotACrash() {
        for text in [
            "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 CET",
            "Sun, 6 Nov 94 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun Nov  6 08:49 1994",
            "Sun, 06 Nov 1994 08:49:37 GMT GMT", "f\u{0324}\u{FFFD}\u{FFFD}\u{FFFD}inalR'le",  // DateFormatter trapped on this one
            String(repeating: "Sun, ", count: 40),
        ] {
            XCTAssertNil(RetryAfter.seconds(text, now: now), text)
        }
    }

    func testRFC850YearsAreAtMost50YearsAhead() {
        let now2026 = Date(timeIntervalSince1970: 1_795_000_000)  // 2026
        XCTAssertEqual(RetryAfter.httpDate("Sunday, 06-Nov-94 08:49:37 GMT", now: now2026),
                       RetryAfter.httpDate("Sun, 06 Nov 1994 08:49:37 GMT", now: now2026))
        XCTAssertEqual(RetryAfter.httpDate("Monday, 06-Nov-50 08:49:37 GMT", now: now2026),
                       RetryAfter.httpDate("Sun, 06 Nov 2050 08:49:37 GMT", now: now2026))
    }

    func testADateInThePastMeansNow() {
        XCTAssertEqual(RetryAfter.seconds("Sun, 06 Nov 1994 08:00:00 GMT", now: now), 0)
    }

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
}
