import Foundation
import XCTest
@testable import ProfirestAPI

/// A 403 insufficient_scope names the scope the call needs, from the contract.
final class ScopeHintTests: XCTestCase {
    func testTheRefusalNamesTheScopeToAskFor() async throws {
        let h = Harness([.problem(403, "insufficient_scope")], accessToken: "at_test")
        let e = await apiError { try await h.api.get("/restaurants/11/attendance/presence") }
        XCTAssertEqual(e?.code, ErrorCode.insufficientScope)
        XCTAssertTrue(e?.detail?.contains("`attendance:read`") == true, e?.detail ?? "")
        XCTAssertTrue(e?.detail?.contains("pair(scope:)") == true)
    }

    func testTheMostLiteralTemplateWins() {
        let batch = ScopeHint.scopes(method: "POST", url: URL(string: "https://x.cz/v2/restaurants/11/attendance/punches/batch")!)
        XCTAssertEqual(batch, ["attendance:punch"])
        XCTAssertNil(ScopeHint.scopes(method: "GET", url: URL(string: "https://x.cz/v2/nowhere/at/all")!))
    }

    func testOtherErrorsAreLeftAlone() async {
        let h = Harness([.problem(403, "forbidden")], accessToken: "at_test")
        let e = await apiError { try await h.api.get("/restaurants/11/attendance/presence") }
        XCTAssertFalse(e?.detail?.contains("pair(scope:)") == true)
    }
}
