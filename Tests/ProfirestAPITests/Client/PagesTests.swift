import Foundation
import XCTest
@testable import ProfirestAPI

/// The reference's "Paged lists": follow `next_cursor` verbatim, stop on a page without one or an empty page,
/// and fetch nothing once the consumer stops.
final class PagesTests: XCTestCase {
    static func page(_ ids: [String], next: String?) -> Step {
        let data = JSONValue.array(ids.map { ["id": .string($0), "name": .string("N \($0)"), "role": "waiter", "active": true] })
        var body: [String: JSONValue] = ["data": data]
        if let next { body["next_cursor"] = .string(next) }
        return .json(200, .object(body))
    }

    func testAllFollowsTheCursorUntilAPageWithoutOne() async throws {
        let h = Harness([Self.page(["a", "b"], next: "c+1/="), Self.page(["c"], next: "opaque2"), Self.page(["d"], next: nil)])
        let staff: [StaffMember] = try await h.api.all("/restaurants/11/staff", options: .init(query: ["limit": 2]))
        XCTAssertEqual(staff.map(\.id), ["a", "b", "c", "d"])
        XCTAssertEqual(h.requests.map { $0.url.query }, ["limit=2", "cursor=c%2B1%2F%3D&limit=2", "cursor=opaque2&limit=2"])
    }

    func testAnEmptyPageEndsTheWalk() async throws {
        let h = Harness([Self.page(["a"], next: "n1"), Self.page([], next: "n2")])
        let staff = try await h.api.all("/restaurants/11/staff", as: StaffMember.self)
        XCTAssertEqual(staff.map(\.id), ["a"])
        XCTAssertEqual(h.requests.count, 2)
    }

    func testAnEmptyFirstPageIsStillOnePage() async throws {
        let h = Harness([Self.page([], next: nil)])
        var pages = 0
        for try await page in h.api.pages("/restaurants/11/staff", as: StaffMemberPage.self) {
            XCTAssertTrue(page.data.isEmpty)
            pages += 1
        }
        XCTAssertEqual(pages, 1)
    }

    func testPagesStopFetchingWhenTheConsumerStops() async throws {
        let h = Harness([Self.page(["a"], next: "n1"), Self.page(["b"], next: "n2"), Self.page(["c"], next: "n3")])
        for try await page in h.api.pages("/restaurants/11/staff", as: StaffMemberPage.self) {
            XCTAssertEqual(page.data.map(\.id), ["a"])
            break
        }
        XCTAssertEqual(h.requests.count, 1)
    }

    func testPagesStopWhenTheTaskIsCancelled() async throws {
        let h = Harness([Self.page(["a"], next: "n1"), Self.page(["b"], next: "n2")])
        let task = Task {
            var seen: [String] = []
            for try await page in h.api.pages("/restaurants/11/staff", as: StaffMemberPage.self) {
                seen += page.data.map(\.id)
                withUnsafeCurrentTask { $0?.cancel() }
            }
            return seen
        }
        do {
            let seen = try await task.value
            XCTAssertEqual(seen, ["a"])
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertEqual(h.requests.count, 1)
    }

    func testAnErrorEndsThePages() async {
        let h = Harness([Self.page(["a"], next: "n1"), .problem(400, ErrorCode.cursorInvalid)])
        let e = await apiError { _ = try await h.api.all("/restaurants/11/staff", as: StaffMember.self) }
        XCTAssertEqual(e?.code, ErrorCode.cursorInvalid)
    }

    func testARepeatedCursorIsAnErrorNotAnEndlessLoop() async {
        let h = Harness([Self.page(["a"], next: "same"), Self.page(["b"], next: "same")])
        let e = await apiError { _ = try await h.api.all("/restaurants/11/staff", as: StaffMember.self) }
        XCTAssertEqual(e?.code, ErrorCode.invalidResponse)
        XCTAssertEqual(h.requests.count, 2)
    }
}
