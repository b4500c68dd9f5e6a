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

    /// The descriptors the hint reads (internal, generated into Operations.swift) say what the contract says.
    func testOperationDescriptorsDescribeTheContract() {
        let punch = Operations.createAttendancePunch
        XCTAssertEqual(punch.method, "POST")
        XCTAssertEqual(punch.path, "/restaurants/{restaurant_id}/attendance/punches")
        XCTAssertFalse(punch.isRoot)
        XCTAssertEqual(punch.requestBody, "AttendancePunchCreate")
        XCTAssertEqual(punch.responses, [200: "AttendancePunch", 201: "AttendancePunch"])
        XCTAssertEqual(punch.scopes, ["attendance:punch"])
        XCTAssertTrue(Operations.createToken.isRoot)
        XCTAssertEqual(Operations.createToken.path, "/oauth/token")
        XCTAssertEqual(Operations.getBackupContent.responses, [200: "Data"])
        XCTAssertEqual(Operations.createReceipt.staffSession, "required")
        XCTAssertEqual(Operations.all.count, 45)
        XCTAssertEqual(Set(Operations.all.map(\.id)).count, 45)
    }
}
