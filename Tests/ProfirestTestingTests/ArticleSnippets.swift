// generated — do not edit: tools/article_snippets.py writes it from the ```swift blocks of
// Sources/ProfirestTesting/ProfirestTesting.docc/*.md (`make docs` or `make generate`); `make test` fails when it
// is stale. Each block is at the top level as the article shows it, so XCTest runs its tests; `make
// testing-kit-test` runs the same blocks in a package outside the repository.
import XCTest
import ProfirestAPI
import ProfirestTesting

// TestingYourApp.md, line 34
#sourceLocation(file: "Sources/ProfirestTesting/ProfirestTesting.docc/TestingYourApp.md", line: 34)
struct PunchModel {
    let outbox: Outbox
    var status: String { outbox.status.count == 0 ? "All punches sent" : "Saved offline, \(outbox.status.count) waiting" }
    func punch(pin: String) async throws {
        let punch = AttendancePunchCreate(id: ProfirestApi.uuid(), type: .clockIn, credential: .init(method: "pin", secret: pin))
        _ = try await outbox.punch(restaurantID: "11", punch)
    }
}
final class PunchModelTests: XCTestCase {
    func testAPunchMadeOfflineIsSentLater() async throws {
        let server = ProfirestTestServer()
        let model = PunchModel(outbox: try server.pairedClient().outbox(path: NSTemporaryDirectory() + UUID().uuidString))
        server.isOffline = true
        try await model.punch(pin: "1234")
        XCTAssertEqual(model.status, "Saved offline, 1 waiting")
        server.isOffline = false
        server.clock.advance(60)                      // a minute later, the network is back
        await model.outbox.flush()
        XCTAssertEqual(model.status, "All punches sent")
        XCTAssertEqual(server.recordedPunches.count, 1)
    }
}
#sourceLocation()
