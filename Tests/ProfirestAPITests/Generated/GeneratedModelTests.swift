import Foundation
import XCTest
import ProfirestAPI

/// The generated models as a user writes them: the reference's call sites, open enums, nullability, oneOf.
final class GeneratedModelTests: XCTestCase {
    private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    private func encode(_ value: some Encodable) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
    }

    func testThePunchOfTheReferenceCompilesWithLiteralsVariablesAndConstants() throws {
        let types = ["p": "clock_in"]
        let type = try XCTUnwrap(types["p"])
        var body = AttendancePunchCreate(id: ProfirestApi.uuid(), type: type, credential: StaffCredential(method: "pin", secret: "4821"))
        body.credential?.employeeId = "emp_2"
        XCTAssertEqual(body.credential?.employeeId, "emp_2")
        let literal = AttendancePunchCreate(id: "x", type: "clock_in")
        let constant = AttendancePunchCreate(id: "x", type: .clockIn)
        XCTAssertEqual(literal, constant)
        XCTAssertEqual(try encode(body)["credential"]?["employee_id"], "emp_2")
    }

    func testOpenEnumsCompareWithStringsAndKeepUnknownValues() throws {
        let punch = try decode(AttendancePunch.self, """
        {"id": "p1", "type": "clock_in", "state": "on_vacation", "occurred_at": "2026-11-29T07:58:12Z",
         "recorded_at": "2026-11-29T07:58:13Z", "restaurant_id": "11", "employee": {"id": "e", "name": "Jana", "role": "manager"}}
        """)
        XCTAssertEqual(punch.state, "on_vacation", "a state the server added later decodes")
        XCTAssertTrue(punch.type == AttendancePunchType.clockIn)
        XCTAssertTrue(AttendancePunchType.clockIn == punch.type)
        XCTAssertTrue(punch.state != AttendanceState.working)
        let states = ["working": "v práci"]
        XCTAssertEqual(states[punch.state] ?? punch.state, "on_vacation", "members stay plain strings, as the reference uses them")
        switch punch.type {
        case AttendancePunchType.clockOut: XCTFail("wrong case")
        case AttendancePunchType.clockIn: break
        default: XCTFail("constants work as switch patterns")
        }
        let value: AttendanceState = "off"
        XCTAssertEqual(value, .off)
        XCTAssertEqual(try encode(AttendanceState(rawValue: "brand_new")), "brand_new")
        XCTAssertEqual(AttendanceState.knownValues, [.working, .onBreak, .off])
    }

    func testRequiredNullableMembersMustBePresent() throws {
        let category = try decode(ProfirestAPI.Category.self, #"{"id": "c", "name": "Polévky", "position": 1, "parent_id": null}"#)
        XCTAssertNil(category.parentId)
        XCTAssertEqual(try encode(category)["parent_id"], .null, "required and nullable: sent as null")
        XCTAssertThrowsError(try decode(ProfirestAPI.Category.self, #"{"id": "c", "name": "Polévky", "position": 1}"#))
    }

    func testMissingRequiredMembersAndWrongTypesFail() {
        XCTAssertThrowsError(try decode(StaffCredential.self, #"{"method": "pin"}"#))
        XCTAssertThrowsError(try decode(StaffCredential.self, #"{"method": "pin", "secret": 4821}"#))
        XCTAssertThrowsError(try decode(Money.self, #"{"amount": 1e400, "currency": "CZK"}"#))
        XCTAssertThrowsError(try decode(Money.self, #"{"amount": 12.5, "currency": "CZK"}"#))
        XCTAssertThrowsError(try decode(AttendancePresence.self, """
        {"employee": {"id": "e", "name": "J", "role": "cook"}, "state": "working", "since": "yesterday"}
        """))
    }

    func testAbsentOptionalMembersAreLeftOut() throws {
        let credential = StaffCredential(method: "card", secret: "04A1B2C3")
        XCTAssertEqual(try encode(credential), ["method": "card", "secret": "04A1B2C3"])
    }

    func testMergePatchTellsAbsentFromNull() throws {
        XCTAssertEqual(try encode(CustomerUpdate(note: .null)), ["note": .null])
        XCTAssertEqual(try encode(CustomerUpdate(email: "jana@example.cz", name: "Jana")), ["name": "Jana", "email": "jana@example.cz"])
        XCTAssertEqual(try encode(CustomerUpdate()), [:])
        let decoded = try decode(CustomerUpdate.self, #"{"note": null, "email": "x@y.cz"}"#)
        XCTAssertEqual(decoded.note, .null)
        XCTAssertEqual(decoded.email, .value("x@y.cz"))
        XCTAssertNil(decoded.phone)
    }

    func testOneOfDecodesKnownShapesAndKeepsUnknownOnes() throws {
        let delivery = try decode(Fulfillment.self, #"{"type": "delivery", "address": "Údolní 5", "phone": "+420601234567"}"#)
        guard case .delivery(let value) = delivery else { return XCTFail("expected delivery, got \(delivery)") }
        XCTAssertEqual(value.address, "Údolní 5")
        let drone = try decode(Fulfillment.self, #"{"type": "drone", "pad": 7}"#)
        XCTAssertEqual(drone, .unknown(["type": "drone", "pad": 7]))
        XCTAssertEqual(try encode(drone), ["type": "drone", "pad": 7], "an unknown shape is sent back as it came")
        XCTAssertThrowsError(try decode(Fulfillment.self, #"{"address": "no type"}"#))
    }

    func testAdditionalPropertiesAndFreeFormData() throws {
        let event = try decode(Event.self, """
        {"id": "e1", "type": "order.created", "restaurant_id": "11", "occurred_at": "2026-11-29T12:01:00.250Z",
         "data": {"order_id": "ord_9Kx2", "total": {"amount": 40800}}}
        """)
        XCTAssertEqual(event.data["order_id"]?.stringValue, "ord_9Kx2")
        XCTAssertEqual(event.data["total"]?["amount"]?.intValue, 40800)
        XCTAssertEqual(event.occurredAt.timeIntervalSince1970, 1_795_953_660.25, accuracy: 0.0001)
        XCTAssertEqual(try encode(event)["occurred_at"], "2026-11-29T12:01:00.250Z")
        XCTAssertTrue(event.type == EventType.orderCreated)
    }

    func testClashingNamesStayReachable() {
        let interval = ProfirestTimeInterval(from: "11:00", to: "22:00")
        let product: ProfirestAPI.Product? = nil
        let tab: ProfirestAPI.Tab? = nil
        XCTAssertEqual(interval.from, "11:00")
        XCTAssertNil(product)
        XCTAssertNil(tab)
    }

    func testPagesConformToProfirestPage() throws {
        let page = try decode(StaffMemberPage.self, #"{"data": [{"id": "e", "name": "J", "role": "cook", "active": true}]}"#)
        func cursor<P: ProfirestPage>(_ page: P) -> String? { page.nextCursor }
        XCTAssertNil(cursor(page))
        XCTAssertEqual(page.data.first?.name, "J")
        let next = try decode(StaffMemberPage.self, #"{"data": [], "next_cursor": "abc"}"#)
        XCTAssertEqual(cursor(next), "abc")
    }

    func testErrorCodesAreTheCatalogStrings() {
        XCTAssertEqual(ErrorCode.staffAmbiguous, "staff_ambiguous")
        XCTAssertEqual(ErrorCode.networkError, "network_error")
        XCTAssertEqual(ErrorCode.staffSessionRequired, "staff_session_required")
        let code: String = "staff_locked"
        switch code {
        case ErrorCode.staffAmbiguous: XCTFail("wrong case")
        case ErrorCode.staffLocked: break
        default: XCTFail("codes work as switch patterns over a String")
        }
    }
}
