import Foundation
import XCTest
@testable import ProfirestAPI

/// Result types: annotation or `as:`, `JSONValue`, `Data`, 204 → nothing, 304, `APIResponse`.
final class ResponseTests: XCTestCase {
    static let member: JSONValue = ["id": "emp_1", "name": "Jana", "role": "manager", "active": true]

    func testTheAnnotationOrAsChoosesTheType() async throws {
        let h = Harness([.json(200, Self.member), .json(200, Self.member)])
        let a: StaffMember = try await h.api.get("/restaurants/11/staff/emp_1")
        let b = try await h.api.get("/restaurants/11/staff/emp_1", as: StaffMember.self)
        XCTAssertEqual(a.name, "Jana")
        XCTAssertEqual(a, b)
    }

    func testJSONValueAndTheUntypedCall() async throws {
        let h = Harness([.json(200, Self.member), .json(200, Self.member)])
        let any: JSONValue = try await h.api.get("/x")
        XCTAssertEqual(any["name"]?.stringValue, "Jana")
        let untyped = try await h.api.get("/x")
        XCTAssertEqual(untyped?["active"]?.boolValue, true)
    }

    func testDataReturnsTheRawBytes() async throws {
        let zip = Data([0x50, 0x4B, 0x03, 0x04, 0xFF])
        let h = Harness([.respond(APIResponse(status: 200, headers: ["Content-Type": "application/zip"], data: zip)),
                         .respond(APIResponse(status: 200, data: zip))])
        let bytes: Data = try await h.api.get("/restaurants/11/backups/b1/content", options: .init(accept: "application/zip"))
        XCTAssertEqual(bytes, zip)
        XCTAssertEqual(h.last?.header("Accept"), "application/zip")
        let again = try await h.api.getData("/restaurants/11/backups/b1/content")
        XCTAssertEqual(again, zip)
    }

    func test204GivesNothing() async throws {
        let h = Harness([.status(204), .status(204), .status(204), .status(204)])
        let untyped = try await h.api.delete("/tabs/t1")
        XCTAssertNil(untyped)
        let optional: StaffMember? = try await h.api.get("/x")
        XCTAssertNil(optional)
        let none = try await h.api.getData("/x")
        XCTAssertNil(none)
        let json: JSONValue = try await h.api.post("/x")
        XCTAssertEqual(json, .null)
    }

    func testSendGivesStatusHeadersAndBytes() async throws {
        let h = Harness([.json(200, Self.member, headers: ["ETag": "\"v7\""]), ok])
        let r = try await h.api.send("GET", "/customers/c1")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.header("etag"), "\"v7\"")
        XCTAssertEqual(r.header("ETAG"), "\"v7\"")
        XCTAssertEqual(try r.decode(as: StaffMember.self).name, "Jana")
        XCTAssertEqual(try r.json?["id"]?.stringValue, "emp_1")
        try await h.api.patch("/customers/c1", body: ["name": "Jana Nováková"], options: .init(ifMatch: r.header("ETag")))
        XCTAssertEqual(h.last?.header("If-Match"), "\"v7\"")
    }

    func testNotModifiedIsASuccessWithoutBody() async throws {
        let h = Harness([.status(304, headers: ["ETag": "\"v7\""])])
        let r = try await h.api.send("GET", "/customers/c1", options: .init(ifNoneMatch: "\"v7\""))
        XCTAssertEqual(r.status, 304)
        XCTAssertTrue(r.data.isEmpty)
        XCTAssertNil(try r.json)
    }

    func testSendWithAModelBodyAndLocation() async throws {
        let h = Harness([.json(201, ["id": "o1"], headers: ["Location": "/v2/restaurants/11/orders/o1"])])
        let r = try await h.api.send("POST", "/restaurants/11/orders", body: OrderStatusChangeLike(status: "accepted"))
        XCTAssertEqual(r.status, 201)
        XCTAssertEqual(r.header("location"), "/v2/restaurants/11/orders/o1")
        XCTAssertEqual(String(decoding: h.last!.body!, as: UTF8.self), #"{"status":"accepted"}"#)
    }

    func testARequestValuesQueryGoesOverTheOptionsQuery() async throws {
        let h = Harness([.json(200, Self.member)])
        let m = try await h.api.core.send(ProfirestRequest(
            "GET", "/restaurants/11/staff/emp_1", query: ["expand": "x"], options: .init(query: ["expand": "y", "limit": 1]),
            as: StaffMember.self))
        XCTAssertEqual(m.id, "emp_1")
        XCTAssertEqual(h.last?.url.absoluteString, "https://api.mujprofirest.cz/v2/restaurants/11/staff/emp_1?expand=x&limit=1")
    }
}

private struct OrderStatusChangeLike: Encodable { let status: String }
