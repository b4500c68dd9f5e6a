import Foundation
import XCTest
@testable import ProfirestAPI

/// The reference's "Errors" section, what `ProfirestAPIError` and `ProfirestUsageError` say of themselves (how an
/// answer becomes an error, redaction included: Pipeline/ErrorFactoryTests).
final class ErrorTests: XCTestCase {
    func testDescriptionAndDebugDescription() {
        let e = ProfirestAPIError(code: "staff_locked", status: 429, title: "Too many wrong attempts", detail: "wait",
                                  retryAfter: 60, requestID: "req_9")
        XCTAssertEqual(e.description, "staff_locked (429): Too many wrong attempts – wait [req_9]")
        XCTAssertTrue(e.debugDescription.contains("retryAfter: 60"))
        XCTAssertEqual(e.errorDescription, "Too many wrong attempts – wait")
    }

    func testUsageErrorSaysHowToFix() {
        let e = ProfirestUsageError("Pass a path such as /restaurants/11.")
        XCTAssertEqual(e.description, "ProfirestUsageError: Pass a path such as /restaurants/11.")
        XCTAssertEqual(e.localizedDescription, "Pass a path such as /restaurants/11.")
    }
}
