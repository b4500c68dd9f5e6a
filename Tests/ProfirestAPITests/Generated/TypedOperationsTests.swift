import Foundation
import XCTest
@testable import ProfirestAPI

/// The generated typed operations: each is the path API underneath, so the request that reaches the transport is
/// exactly the one the contract describes.
final class TypedOperationsTests: XCTestCase {
    private static let punchJSON: JSONValue = [
        "id": "01936f4e-8a2b-7c3d-9e4f-5a6b7c8d9e0f", "type": "clock_in", "state": "working", "restaurant_id": "11",
        "occurred_at": "2026-11-29T07:58:12Z", "recorded_at": "2026-11-29T07:58:13Z",
        "employee": ["id": "emp_1", "name": "Jana Nováková", "role": "manager"],
    ]

    func testCreatePunchPostsTheModelWithAnIdempotencyKey() async throws {
        let h = Harness([.json(201, Self.punchJSON)], accessToken: "at")
        let body = AttendancePunchCreate(id: "01936f4e-8a2b-7c3d-9e4f-5a6b7c8d9e0f", type: .clockIn,
                                         credential: StaffCredential(method: "pin", secret: "4821"))
        let punch = try await h.api.attendance.createPunch(restaurantID: "11", body)
        XCTAssertEqual(punch.employee.name, "Jana Nováková")
        let request = try XCTUnwrap(h.transport.requests.last)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.url.absoluteString, "https://api.mujprofirest.cz/v2/restaurants/11/attendance/punches")
        XCTAssertNotNil(request.header("Idempotency-Key"))
        let sent = try JSONDecoder().decode(JSONValue.self, from: XCTUnwrap(request.body))
        XCTAssertEqual(sent["type"], "clock_in")
        XCTAssertEqual(sent["credential"]?["secret"], "4821")
    }

    func testPathParametersAreOneSegmentEach() async throws {
        let h = Harness([.json(200, ["id": "o/1", "number": 1])])
        _ = try? await h.api.orders.get(restaurantID: "11", orderID: "a/b?c#d e%")
        XCTAssertEqual(h.transport.requests.last?.url.absoluteString,
                       "https://api.mujprofirest.cz/v2/restaurants/11/orders/a%2Fb%3Fc%23d%20e%25")
    }

    func testQueryParametersAreSentAndEmptyOnesLeftOut() async throws {
        let h = Harness([.json(200, ["data": []]), .json(200, ["data": []])])
        _ = try await h.api.kitchen.listTickets(restaurantID: "11", status: ["new", "cooking"], limit: 20)
        let url = try XCTUnwrap(h.transport.requests.first?.url)
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        XCTAssertEqual(Set(items.map { "\($0.name)=\($0.value ?? "")" }), ["status=new,cooking", "limit=20"])
        _ = try await h.api.kitchen.listTickets(restaurantID: "11")
        XCTAssertNil(h.transport.requests.last?.url.query)
    }

    func testUpdateSendsIfMatchAndTheMergePatch() async throws {
        let customer: JSONValue = ["id": "cus_8D2k", "name": "Jana", "email": nil, "phone": nil, "note": nil, "loyalty_points": 0,
                                   "version": 4, "updated_at": "2026-11-29T07:58:12Z"]
        let h = Harness([.json(200, customer, headers: ["ETag": "\"4\""])])
        let updated = try await h.api.customers.update(customerID: "cus_8D2k", CustomerUpdate(note: .null), ifMatch: "\"3\"")
        XCTAssertEqual(updated.version, 4)
        let request = try XCTUnwrap(h.transport.requests.last)
        XCTAssertEqual(request.method, "PATCH")
        XCTAssertEqual(request.header("If-Match"), "\"3\"")
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: XCTUnwrap(request.body)), ["note": nil])
    }

    func testBinaryOperationsSendAndReceiveBytes() async throws {
        let zip = Data([0x50, 0x4B, 0x03, 0x04, 0xFF])
        let backup: JSONValue = ["id": "bak_4R", "restaurant_id": "11", "size": 5, "sha256": .string(String(repeating: "a", count: 64)),
                                 "created_at": "2026-11-29T03:00:00Z"]
        let h = Harness([.json(201, backup), .respond(APIResponse(status: 200, headers: ["Content-Type": "application/zip"], data: zip))])
        let stored = try await h.api.backups.create(restaurantID: "11", zip)
        XCTAssertEqual(stored.id, "bak_4R")
        XCTAssertEqual(h.transport.requests[0].header("Content-Type"), "application/zip")
        XCTAssertEqual(h.transport.requests[0].body, zip)
        let downloaded = try await h.api.backups.getContent(restaurantID: "11", backupID: "bak_4R")
        XCTAssertEqual(downloaded, zip)
        XCTAssertEqual(h.transport.requests[1].header("Accept"), "application/zip")
    }

    func testOperationsWithoutABodyAnswerNothing() async throws {
        let h = Harness([.status(204)])
        try await h.api.devices.unpair(restaurantID: "11", deviceID: "dev_7Q2M")
        XCTAssertEqual(h.transport.requests.last?.method, "DELETE")
        XCTAssertEqual(h.transport.requests.last?.url.path, "/v2/restaurants/11/devices/dev_7Q2M")
    }

    func testErrorsAreTheSameAsThePathAPIs() async throws {
        let h = Harness([.problem(409, "attendance_state_conflict")])
        do {
            _ = try await h.api.attendance.createPunch(restaurantID: "11", AttendancePunchCreate(id: "x", type: .clockOut))
            XCTFail("expected an error")
        } catch let error as ProfirestAPIError {
            XCTAssertEqual(error.code, ErrorCode.attendanceStateConflict)
            XCTAssertEqual(error.status, 409)
        }
    }
}
