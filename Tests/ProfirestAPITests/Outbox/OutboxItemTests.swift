import Foundation
import XCTest
@testable import ProfirestAPI

/// `OutboxItem`: what the app sees of a waiting write — never its body, whose punch carries a PIN — what became
/// of a write handed in (`OutboxOutcome`), and the outbox's status.
final class OutboxItemTests: XCTestCase {
    static let pin = "739164"

    /// A punch as the journal keeps it, its PIN in the body, and the item the app sees of it.
    private func journaledPunch(attempts: Int = 2, lastErrorCode: String? = ErrorCode.networkError) -> OutboxItem {
        JournalEntry(
            id: "p-0193", kind: "punch", path: "/restaurants/11/attendance/punches", restaurantID: "11",
            body: Data(#"{"id":"p-0193","type":"clock_in","credential":{"method":"pin","secret":"\#(Self.pin)"}}"#.utf8),
            contentType: "application/json", enqueuedAt: Harness.now, attempts: attempts, lastErrorCode: lastErrorCode
        ).item
    }

    func testTheDescriptionIsOneLineForALogWithoutTheBody() {
        XCTAssertEqual(
            journaledPunch().description,
            "OutboxItem(punch p-0193 → /restaurants/11/attendance/punches, attempts: 2, last: network_error)")
        let request = OutboxItem(
            id: "key-1", kind: .request, path: "/customers", enqueuedAt: Harness.now, attempts: 0, lastErrorCode: nil)
        XCTAssertEqual(request.description, "OutboxItem(request key-1 → /customers, attempts: 0)")
    }

    func testNoWayOfPrintingAnItemShowsThePIN() {
        let item = journaledPunch()
        var dumped = ""
        dump(item, to: &dumped)
        var outcomeDumped = ""
        dump(OutboxOutcome.queued(item), to: &outcomeDumped)
        for text in [item.description, "\(item)", String(reflecting: item), dumped, outcomeDumped, "\(OutboxOutcome.queued(item))"] {
            XCTAssertFalse(text.contains(Self.pin), text)
            XCTAssertFalse(text.contains("credential"), text)
            XCTAssertTrue(text.contains("p-0193"), text)
        }
        XCTAssertEqual(Mirror(reflecting: item).children.compactMap(\.label),
                       ["id", "kind", "path", "enqueuedAt", "attempts", "lastErrorCode"], "an item holds no body at all")
    }

    func testTheKindsAreSpelledAsTheJournalKeepsThem() {
        XCTAssertEqual(OutboxItem.Kind.request.rawValue, "request")
        XCTAssertEqual(OutboxItem.Kind.punch.rawValue, "punch")
        XCTAssertEqual(OutboxItem.Kind(rawValue: "punch"), .punch)
        XCTAssertNil(OutboxItem.Kind(rawValue: "Punch"))
    }

    func testOutcomesAreEqualWhenTheirAnswersOrItemsAre() {
        let item = journaledPunch()
        XCTAssertEqual(OutboxOutcome.delivered(["id": "c1"]), .delivered(["id": "c1"]))
        XCTAssertNotEqual(OutboxOutcome.delivered(["id": "c1"]), .delivered(["id": "c2"]))
        XCTAssertNotEqual(OutboxOutcome.delivered(["id": "c1"]), .delivered(nil))
        XCTAssertEqual(OutboxOutcome.delivered(nil), .delivered(nil))
        XCTAssertEqual(OutboxOutcome.queued(item), .queued(journaledPunch()))
        XCTAssertNotEqual(OutboxOutcome.queued(item), .queued(journaledPunch(attempts: 3)))
        XCTAssertNotEqual(OutboxOutcome.queued(item), .queued(journaledPunch(lastErrorCode: nil)))
        XCTAssertNotEqual(OutboxOutcome.queued(item), .delivered(nil))
        XCTAssertEqual(Set([OutboxOutcome.queued(item), .queued(journaledPunch()), .delivered(nil)]).count, 2)
    }

    func testTheOldestAgeIsMeasuredToNowAndNilWhenNothingWaits() {
        let waiting = OutboxStatus(count: 2, oldestEnqueuedAt: Harness.now, lastFailure: nil)
        XCTAssertEqual(waiting.oldestAge(now: Harness.now.addingTimeInterval(90)), 90)
        XCTAssertEqual(waiting.oldestAge(now: Harness.now), 0)
        XCTAssertNil(OutboxStatus(count: 0, oldestEnqueuedAt: nil, lastFailure: nil).oldestAge(now: Harness.now))
    }
}
