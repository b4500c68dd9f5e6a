import Foundation
import XCTest
@testable import ProfirestAPI

/// A number no Swift number holds (`1e400`, a 30-digit integer) fails only a member that reads it — naming its JSON
/// path and the number — and never an answer whose model does not read it.
final class OversizedNumbersTests: XCTestCase {
    private struct Counted: Decodable, Equatable {
        var count: Int
        var price: Double?
    }

    private struct Listing: Decodable {
        var items: [Counted]
    }

    private static let thirtyDigits = "123456789012345678901234567890"

    private func answer(_ json: String) -> APIResponse {
        APIResponse(status: 200, headers: ["Content-Type": "application/json"], data: Data(json.utf8))
    }

    private func detail<T: Decodable>(_ json: String, as type: T.Type) -> String? {
        do {
            _ = try answer(json).decode(as: T.self)
            XCTFail("\(json) decoded as \(T.self)")
            return nil
        } catch let error as ProfirestAPIError {
            XCTAssertEqual(error.code, ErrorCode.invalidResponse)
            return error.detail
        } catch {
            XCTFail("\(error)")
            return nil
        }
    }

    func testAKnownIntMemberNamesItsPathAndTheNumber() {
        for number in ["1e400", "-1e400", Self.thirtyDigits, "-" + Self.thirtyDigits] {
            let text = detail(#"{"count": \#(number)}"#, as: Counted.self) ?? ""
            XCTAssertTrue(text.hasSuffix("at $.count: \(number) does not fit in Int"), text)
            XCTAssertFalse(text.contains("not valid JSON"), text)
        }
    }

    func testAKnownDoubleMemberNamesItsPathAndTheNumber() {
        let text = detail(#"{"count": 1, "price": 1e400}"#, as: Counted.self) ?? ""
        XCTAssertTrue(text.hasSuffix("at $.price: 1e400 does not fit in Double"), text)
    }

    func testANumberInANestedArrayElementNamesTheElement() {
        let json = #"{"items": [{"count": 1}, {"count": 2}, {"count": 3}, {"count": 1e400}]}"#
        let text = detail(json, as: Listing.self) ?? ""
        XCTAssertTrue(text.hasSuffix("at $.items[3].count: 1e400 does not fit in Int"), text)
        let digits = detail(#"{"items": [{"count": 1}, {"count": \#(Self.thirtyDigits)}]}"#, as: Listing.self) ?? ""
        XCTAssertTrue(digits.hasSuffix("at $.items[1].count: \(Self.thirtyDigits) does not fit in Int"), digits)
    }

    func testAnUnknownMemberNeverMakesTheAnswerUnreadable() throws {
        let json = #"""
            {"count": 2, "extra": 1e400, "big": \#(Self.thirtyDigits), "nested": {"x": [-1e400, 2E+999]},
             "text": "1e400 \" 123456789012345678901234567890"}
            """#
        XCTAssertEqual(try answer(json).decode(as: Counted.self), Counted(count: 2, price: nil))
        let listing = try answer(#"{"items": [{"count": 1, "huge": 1e400}], "total": \#(Self.thirtyDigits)}"#)
            .decode(as: Listing.self)
        XCTAssertEqual(listing.items, [Counted(count: 1, price: nil)])
    }

    func testAnotherFailureBesideAnOversizedNumberIsNamedAsItIs() {
        let text = detail(#"{"extra": 1e400}"#, as: Counted.self) ?? ""
        XCTAssertTrue(text.hasSuffix("at $.count: the member is missing"), text)
    }

    func testJSONValueHoldsTheNumberAsADouble() throws {
        let value = try answer(#"{"a": 1e400, "b": \#(Self.thirtyDigits), "s": "1e400", "n": -1e400, "i": 7}"#)
            .decode(as: JSONValue.self)
        XCTAssertEqual(value["a"]?.doubleValue, .infinity)
        XCTAssertEqual(value["n"]?.doubleValue, -.infinity)
        XCTAssertEqual(value["b"]?.doubleValue, 1.2345678901234568e29)
        XCTAssertEqual(value["s"], "1e400", "a string stays a string")
        XCTAssertEqual(value["i"], 7)
    }

    /// A number that is valid JSON and fits a `Double` but not the integer member reading it: Linux's `JSONDecoder`
    /// says "not valid JSON" at `$`; the error names the member and the number instead.
    func testANumberAnIntegerMemberCannotHoldNamesThePath() {
        for number in ["1.5", "-0.25", "2e-1", "9223372036854775808", "1e19"] {
            let text = detail(#"{"count": \#(number)}"#, as: Counted.self) ?? ""
            XCTAssertTrue(text.hasSuffix("at $.count: \(number) does not fit in Int"), text)
        }
        let json = #"{"items": [{"count": 1, "price": 2.5}, {"count": 2.0, "price": 0.1}, {"price": 9.99, "count": 3.5}]}"#
        let text = detail(json, as: Listing.self) ?? ""
        XCTAssertTrue(text.hasSuffix("at $.items[2].count: 3.5 does not fit in Int"), "Doubles passed over: \(text)")
    }

    /// Numbers an integer holds exactly, whatever their spelling, and fractions in `Double` members decode.
    /// A model reads its members in its own order, not the document's: the same number sent for a `Double` read first
    /// and for an `Int` read later is told apart by where it stands, so the `Int` member is still named.
    func testEqualNumbersInADoubleAndAnIntMemberAreToldApart() {
        struct RatioFirst: Decodable { var ratio: Double; var count: Int }
        let text = detail(#"{"count": 1.5, "ratio": 1.5}"#, as: RatioFirst.self) ?? ""
        XCTAssertTrue(text.hasSuffix("at $.count: 1.5 does not fit in Int"), text)
        let listed = detail(#"{"items": [{"count": 2, "price": 7.5}, {"count": 7.5, "price": 7.5}]}"#, as: Listing.self)
        XCTAssertTrue(listed?.hasSuffix("at $.items[1].count: 7.5 does not fit in Int") == true, listed ?? "")
    }

    func testIntegralSpellingsAndDoublesStillDecode() throws {
        let listing = try answer(#"{"items": [{"count": 1.0, "price": 1.5}, {"count": 1e3, "price": 2}, {"count": -0}]}"#)
            .decode(as: Listing.self)
        XCTAssertEqual(listing.items.map(\.count), [1, 1000, 0])
    }

    /// A `UInt64` member holds what an `Int` cannot: it is not the culprit; the `Int` beside it is.
    func testAnUnsignedMemberIsNotBlamedForANumberItHolds() {
        struct Wide: Decodable { var big: UInt64; var small: Int }
        let text = detail(#"{"big": 18446744073709551615, "small": 0.5}"#, as: Wide.self) ?? ""
        XCTAssertTrue(text.hasSuffix("at $.small: 0.5 does not fit in Int"), text)
    }

    func testTheScanSkipsStringsAndFindsOnlyWhatDoesNotFit() {
        let json = #"{"a": "x\"1e400", "b": 1e300, "c": 9223372036854775807, "d": 18446744073709551615, "e": 1e400, "f": 1.5e-400}"#
        let bytes = Array(json.utf8)
        let found = OversizedNumbers.find(in: Data(bytes)).map { String(decoding: bytes[$0], as: UTF8.self) }
        XCTAssertEqual(found, ["1e400"])
    }
}
