import XCTest
@testable import ProfirestAPI

final class JSONValueTests: XCTestCase {
    private func decode(_ json: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
    }

    private func encode(_ value: JSONValue) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    func testLiteralsAndSubscripts() {
        let c: JSONValue = ["name": "Jana", "id": "e1", "tags": ["a", 2, 2.5, true, nil]]
        XCTAssertEqual(c["name"]?.stringValue, "Jana")
        XCTAssertEqual(c["tags"]?[1]?.intValue, 2)
        XCTAssertEqual(c["tags"]?[2]?.doubleValue, 2.5)
        XCTAssertEqual(c["tags"]?[3]?.boolValue, true)
        XCTAssertEqual(c["tags"]?[4]?.isNull, true)
        XCTAssertNil(c["missing"])
        XCTAssertNil(c["tags"]?[5])
        XCTAssertNil(c["tags"]?[-1])
        XCTAssertNil(c[0], "an object has no elements")
        XCTAssertNil(c["name"]?["x"], "a string has no members")
    }

    func testAccessorsConvertBetweenNumberKinds() {
        XCTAssertEqual(JSONValue.number(3.0).intValue, 3)
        XCTAssertNil(JSONValue.number(3.5).intValue)
        XCTAssertNil(JSONValue.number(1e300).intValue)
        XCTAssertEqual(JSONValue.integer(7).doubleValue, 7.0)
        XCTAssertNil(JSONValue.string("7").intValue)
        XCTAssertNil(JSONValue.integer(1).boolValue)
        XCTAssertNil(JSONValue.null.stringValue)
        XCTAssertEqual(JSONValue.array([1]).arrayValue, [1])
        XCTAssertEqual(JSONValue.object(["a": 1]).objectValue, ["a": 1])
        XCTAssertFalse(JSONValue.bool(false).isNull)
    }

    func testIntegersBeyondDoublePrecisionRoundTripExactly() throws {
        for n in [9_007_199_254_740_993, Int.max, Int.min, -9_007_199_254_740_993] {
            let value = try decode(String(n))
            XCTAssertEqual(value, .integer(n))
            guard case .integer(let back) = value else { return XCTFail("\(n) decoded as \(value)") }
            XCTAssertEqual(back, n)
            XCTAssertEqual(try encode(value), String(n))
        }
    }

    func testDecimalsStayDecimalsAndRoundTrip() throws {
        for text in ["0.1", "-2.5", "1e-07", "1e+300", "123456789.125"] {
            let value = try decode(text)
            guard case .number(let d) = value else { return XCTFail("\(text) decoded as \(value)") }
            XCTAssertEqual(d, Double(text))
            XCTAssertEqual(try decode(try encode(value)), value)
        }
        // Beyond Int the value can only be a Double.
        XCTAssertEqual(try decode("99999999999999999999"), .number(1e20))
        // A large double (here from more digits than an Int reads) is written as its exact integer: its shortest digits,
        // 1.2345678901234568e+18, read back exactly as the integer 1234567890123456800 — another number (fuzzing).
        let large = try decode("1.23456789012345678901e18")
        guard case .number = large else { return XCTFail("\(large)") }
        XCTAssertEqual(try encode(large), "1234567890123456768")
        XCTAssertEqual(try decode(try encode(large)), large)
    }

    func testIntegerAndIntegralNumberAreEqualAndHashAlike() {
        XCTAssertEqual(JSONValue.integer(1), JSONValue.number(1.0))
        XCTAssertEqual(Set<JSONValue>([.integer(1), .number(1.0), .number(-0.0), .integer(0)]).count, 2)
        XCTAssertNotEqual(JSONValue.integer(1), JSONValue.number(1.5))
        XCTAssertNotEqual(JSONValue.integer(1), JSONValue.bool(true))
        XCTAssertNotEqual(JSONValue.string("1"), JSONValue.integer(1))
        XCTAssertEqual(["a": 1, "b": [2.0]] as JSONValue, ["b": [2], "a": 1.0] as JSONValue)
    }

    func testDecodesEveryKindAndTellsBoolFromNumber() throws {
        let value = try decode(#"{"n":null,"t":true,"f":false,"i":1,"d":1.5,"s":"x","a":[1,"1",true],"o":{}}"#)
        XCTAssertEqual(
            value,
            ["n": nil, "t": true, "f": false, "i": 1, "d": 1.5, "s": "x", "a": [1, "1", true], "o": [:]])
        XCTAssertEqual(value["t"], .bool(true))
        XCTAssertEqual(value["i"], .integer(1))
        XCTAssertEqual(value["a"]?[1], .string("1"))
    }

    func testOddInputThrowsInsteadOfCrashing() {
        for text in ["", "{", "[1,", "tru", "\"abc", "{\"a\" 1}", "1e999999", "NaN", "[" + String(repeating: "[", count: 5000)] {
            XCTAssertThrowsError(try decode(text), "input: \(text.prefix(20))")
        }
    }

    func testDescriptionIsCompactJSONWithSortedKeys() throws {
        let value: JSONValue = ["b": [1, 2.5, nil, true], "a": "q\"\\\n\u{01}/é", "c": ["z": 1, "y": [:]]]
        XCTAssertEqual(value.description, #"{"a":"q\"\\\n\u0001/é","b":[1,2.5,null,true],"c":{"y":{},"z":1}}"#)
        XCTAssertEqual(try decode(value.description), value)
        XCTAssertEqual(JSONValue.number(.nan).description, "null")
        XCTAssertEqual(JSONValue.number(2).description, "2.0")
    }

    func testConvertsFromAndToCodableTypes() throws {
        struct Employee: Codable, Equatable {
            var id: String
            var name: String
            var badge: Int
            var rate: Double
            var manager: String?
        }
        let employee = Employee(id: "e1", name: "Jana", badge: 9_007_199_254_740_993, rate: 0.1, manager: nil)
        let value = try JSONValue(encoding: employee)
        XCTAssertEqual(value["badge"], .integer(9_007_199_254_740_993))
        XCTAssertEqual(value["rate"], .number(0.1))
        XCTAssertNil(value["manager"])
        XCTAssertEqual(try value.decode(as: Employee.self), employee)
        XCTAssertThrowsError(try JSONValue.string("x").decode(as: Employee.self))
        XCTAssertEqual(try JSONValue(encoding: [1, 2]), [1, 2])
    }
}
