import Foundation
import XCTest
@testable import ProfirestAPI

/// `QueryValue.swift`: the literals that make each kind of value, and how each is written into a query — empty ones
/// left out, lists joined with commas, everything escaped but numbers and booleans.
final class QueryValueTests: XCTestCase {
    /// The library's escaping, as `QueryEncoding` applies it.
    private func encoded(_ value: QueryValue) -> String? { value.encoded(escape: QueryEncoding.escape) }

    func testLiteralsMakeTheirKinds() {
        let values: [QueryValue] = ["pos", 50, 1.5, true, ["a", "b"], nil]
        XCTAssertEqual(values, [.string("pos"), .int(50), .double(1.5), .bool(true), .list(["a", "b"]), .omitted])
        XCTAssertEqual(Set<QueryValue>([1, .int(1), "1"]).count, 2, "an int and a string that read alike are not equal")
    }

    func testStringsIntsBoolsAndLists() {
        XCTAssertEqual(encoded("pos"), "pos")
        XCTAssertEqual(encoded(50), "50")
        XCTAssertEqual(encoded(-3), "-3")
        XCTAssertEqual(encoded(0), "0")
        XCTAssertEqual(encoded(1.5), "1.5")
        XCTAssertEqual(encoded(true), "true")
        XCTAssertEqual(encoded(false), "false", "false is a value, not an empty one")
        XCTAssertEqual(encoded(["order.created", "order.paid"]), "order.created,order.paid")
        XCTAssertEqual(encoded(["only"]), "only")
    }

    func testEmptyValuesAreLeftOut() {
        XCTAssertNil(encoded(""))
        XCTAssertNil(encoded(nil))
        XCTAssertNil(encoded(.list([])))
        XCTAssertNil(encoded(["", ""]))
        XCTAssertEqual(encoded(["a", "", "b"]), "a,b", "empty items are dropped from a list")
    }

    func testReservedCharactersArePercentEncoded() {
        XCTAssertEqual(encoded("a b/c?d#e&f=g%h"), "a%20b%2Fc%3Fd%23e%26f%3Dg%25h")
        XCTAssertEqual(encoded("Jana Nováková"), "Jana%20Nov%C3%A1kov%C3%A1")
        XCTAssertEqual(encoded("AZaz09-._~"), "AZaz09-._~", "unreserved characters stay")
        XCTAssertEqual(encoded("2026-09-21T14:13:20Z"), "2026-09-21T14%3A13%3A20Z")
    }

    /// A bare `+` in a query is read as a space by servers: it is always encoded, in a double's exponent too.
    func testAPlusIsNeverLeftBare() {
        XCTAssertEqual(encoded("1+1"), "1%2B1")
        XCTAssertEqual(encoded(.double(1e20)), "1e%2B20")
        XCTAssertEqual(encoded(["a+b", "c"]), "a%2Bb,c")
    }

    /// Each item of a list is escaped on its own, so a comma inside one stays told from the separator.
    func testACommaInsideAListItemIsEscapedButTheSeparatorIsNot() {
        XCTAssertEqual(encoded(["a,b", "c"]), "a%2Cb,c")
        XCTAssertEqual(QueryValue.list(["a", "b"]).encoded(escape: { "<\($0)>" }), "<a>,<b>")
        XCTAssertEqual(QueryValue.int(5).encoded(escape: { _ in XCTFail("a number needs no escaping"); return "" }), "5")
        XCTAssertEqual(QueryValue.bool(true).encoded(escape: { _ in XCTFail("a boolean needs no escaping"); return "" }), "true")
    }

    func testInAQueryStringKeysAreSortedAndEscapedAndEmptyValuesLeftOut() {
        let query: [String: QueryValue] = ["limit": 5, "cursor": "a+b", "since": nil, "types": ["x", "y"], "the key": true, "q": ""]
        XCTAssertEqual(QueryEncoding.encode(query), "cursor=a%2Bb&limit=5&the%20key=true&types=x,y")
        XCTAssertEqual(QueryEncoding.encode([:]), "")
        XCTAssertEqual(QueryEncoding.encode(["a": nil]), "")
    }
}
