import XCTest
@testable import ProfirestAPI

/// `JSONReader` gives what `JSONDecoder().decode(JSONValue.self, …)` gives, edge case by edge case, and
/// `JSONValueDecoder` decodes models as `JSONDecoder` does, errors included.
final class JSONReaderTests: XCTestCase {
    private func read(_ text: String) throws -> JSONValue { try JSONReader.value(from: Data(text.utf8)) }
    private func read(_ bytes: [UInt8]) throws -> JSONValue { try JSONReader.value(from: Data(bytes)) }
    private func foundation(_ bytes: [UInt8]) -> JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) }

    /// Equal and of the same kind: `.integer(1)` is not `.number(1.0)` here, and -0.0 is not 0.0.
    private func assertSame(_ a: JSONValue?, _ b: JSONValue?, _ message: String, line: UInt = #line) {
        func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
            switch (a, b) {
            case (.integer(let x), .integer(let y)): return x == y
            case (.number(let x), .number(let y)): return x.bitPattern == y.bitPattern
            case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(same)
            case (.object(let x), .object(let y)):
                return x.count == y.count && x.allSatisfy { key, value in y[key].map { same(value, $0) } ?? false }
            case (.integer, _), (.number, _), (.array, _), (.object, _): return false
            default: return a == b
            }
        }
        switch (a, b) {
        case (nil, nil): return
        case (let a?, let b?) where same(a, b): return
        default: XCTFail("\(message): \(String(describing: a)) vs \(String(describing: b))", line: line)
        }
    }

    func testEveryKindReadsAsJSONDecoderReadsIt() throws {
        let text = #" {"n":null,"t":true,"f":false,"i":1,"d":1.5,"s":"x","a":[1,"1",true,[],{}],"o":{"p":{"q":[null]}}} "#
        let value = try read(text)
        XCTAssertEqual(value, ["n": nil, "t": true, "f": false, "i": 1, "d": 1.5, "s": "x", "a": [1, "1", true, [], [:]],
                               "o": ["p": ["q": [nil]]]])
        assertSame(value, foundation(Array(text.utf8)), text)
        for scalar in ["0", "\"a\"", "true", "null", " 7 "] {
            assertSame(try read(scalar), foundation(Array(scalar.utf8)), "a bare \(scalar)")
        }
    }

    func testNumbersAreKeptAsJSONValueKeepsThem() throws {
        let expected: [(String, JSONValue)] = [
            ("0", .integer(0)), ("-0", .integer(0)), ("-0.0", .integer(0)), ("1.0", .integer(1)), ("1e3", .integer(1000)),
            ("100e-2", .integer(1)), ("0.5", .number(0.5)), ("1e-3", .number(0.001)), ("-2.5E+2", .integer(-250)),
            ("123456789012345678", .integer(123_456_789_012_345_678)),
            ("1234567890123456789", .integer(1_234_567_890_123_456_789)),
            ("9223372036854775807", .integer(.max)), ("-9223372036854775808", .integer(.min)),
            ("9223372036854775808", .number(9_223_372_036_854_775_808.0)), ("99999999999999999999", .number(1e20)),
            ("1.5e300", .number(1.5e300)), ("4.9e-324", .number(.leastNonzeroMagnitude)), ("1e-400", .integer(0)),
            ("1.7976931348623157e308", .number(.greatestFiniteMagnitude)), ("1.0000000000000001", .integer(1)),
            // From 2^53 on, JSONDecoder reads the digits beyond the double's once more: the reader gives its answers.
            ("9007199254740993.0", .integer(9_007_199_254_740_993)), ("9007199254740993e0", .integer(9_007_199_254_740_993)),
            ("1234567890123456789.5", .integer(1_234_567_890_123_456_789)),
            ("1.23456789012345678901e18", .number(1.23456789012345678901e18)),
            ("-9223372036854775809", .number(-9_223_372_036_854_775_809.0)),
            ("9223372036854775296.0", .number(9_223_372_036_854_775_296.0)),
        ]
        for (text, value) in expected {
            assertSame(try read(text), value, text)
            assertSame(try read(text), foundation(Array(text.utf8)), "\(text) as JSONDecoder reads it")
        }
    }

    func testNumbersOutsideTheGrammarOrBeyondDoubleAreRefused() {
        for text in ["01", "1.", ".5", "+1", "1e", "1e+", "-", "0x10", "1e400", "-1e400", "1.7976931348623159e308", "NaN",
                     "Infinity", "- 1", "1 2"] {
            XCTAssertThrowsError(try read(text), text)
            XCTAssertNil(foundation(Array(text.utf8)), "JSONDecoder refuses \(text) too")
        }
    }

    func testStringsDecodeEscapesAndSurrogatePairs() throws {
        let cases: [(String, String)] = [
            (#""""#, ""), (#""\"\\\/\b\f\n\r\t""#, "\"\\/\u{08}\u{0C}\n\r\t"), (#""\u00e9\u00C9""#, "éÉ"),
            (#""\ud83d\ude00""#, "😀"), (#""\uDBFF\uDFFF""#, "\u{10FFFF}"), (#""\u0000""#, "\u{0}"), ("\"é😀\"", "é😀"),
            ("\"a\u{7F}b\"", "a\u{7F}b"),
        ]
        for (text, string) in cases {
            XCTAssertEqual(try read(text), .string(string), text)
            assertSame(try read(text), foundation(Array(text.utf8)), text)
        }
    }

    func testBrokenStringsAreRefused() {
        let texts = [#""\ud83d""#, #""\ude00""#, #""\ud83dx""#, #""\uD800\u0041""#, #""\x""#, #""\u12""#, #""\u12G4""#,
                     "\"a\u{01}\"", "\"a\nb\"", "\"abc", "\"\\"]
        for text in texts {
            XCTAssertThrowsError(try read(text), text)
            XCTAssertNil(foundation(Array(text.utf8)), "JSONDecoder refuses \(text) too")
        }
        let invalidUTF8: [[UInt8]] = [[0xC0, 0x80], [0xC2], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
                                      [0xF5, 0x80, 0x80, 0x80], [0x80], [0xFF], [0xF0, 0x9F, 0x98]]
        for bad in invalidUTF8 {
            XCTAssertThrowsError(try read([0x22] + bad + [0x22]), "\(bad)")
            XCTAssertThrowsError(try read([0x22, 0x5C, 0x6E] + bad + [0x22]), "\(bad) after an escape")
        }
    }

    func testSyntaxErrorsAreRefusedWithTheirByte() {
        for text in ["", " ", "{", "[1,", "[1,]", "{,}", "{\"a\"}", "{\"a\" 1}", "{\"a\":1,}", "{1:2}", "tru", "nul", "[1 2]",
                     "true false", "{\"a\":1}x", "\u{0B}1", "[\"a\"\u{0B}]"] {
            XCTAssertThrowsError(try read(text), text) { error in
                guard case .dataCorrupted(let context)? = error as? DecodingError else {
                    return XCTFail("\(text): \(error)")
                }
                XCTAssertTrue(context.codingPath.isEmpty)
                XCTAssertTrue(context.debugDescription.hasPrefix("The given data was not valid JSON: "), context.debugDescription)
                XCTAssertTrue(context.debugDescription.contains(" at byte "), context.debugDescription)
            }
        }
        XCTAssertThrowsError(try read("[1,}")) { error in
            guard case .dataCorrupted(let context)? = error as? DecodingError else { return XCTFail("\(error)") }
            XCTAssertEqual(context.debugDescription, "The given data was not valid JSON: unexpected character at byte 3.")
        }
    }

    func testALeadingByteOrderMarkIsSkippedAsJSONDecoderSkipsIt() throws {
        XCTAssertEqual(try read([0xEF, 0xBB, 0xBF] + Array("{\"a\":1}".utf8)), ["a": 1])
        XCTAssertNotNil(foundation([0xEF, 0xBB, 0xBF] + Array("{\"a\":1}".utf8)))
        XCTAssertThrowsError(try read([0x20, 0xEF, 0xBB, 0xBF, 0x31]), "only at the start")
    }

    func testWhitespaceIsRFC8259s() throws {
        XCTAssertEqual(try read("\t\n\r [ 1 ,\t2 ] \r\n"), [1, 2])
        XCTAssertThrowsError(try read("\u{A0}1"), "a no-break space is not JSON whitespace")
    }

    func testDepthIsLimitedAsJSONDecoderLimitsIt() throws {
        func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        XCTAssertNoThrow(try read(nested(JSONReader.maximumDepth)))
        XCTAssertThrowsError(try read(nested(JSONReader.maximumDepth + 1)))
        XCTAssertThrowsError(try read(nested(100_000)), "deep input is refused, not a stack overflow")
        for depth in [JSONReader.maximumDepth, JSONReader.maximumDepth + 1] {
            let bytes = Array(nested(depth).utf8)
            XCTAssertEqual((try? read(bytes)) != nil, foundation(bytes) != nil, "depth \(depth)")
        }
    }

    func testTheFirstOfDuplicateKeysWins() throws {
        let text = #"{"a":1,"b":{"c":true,"c":false},"a":2}"#
        XCTAssertEqual(try read(text), ["a": 1, "b": ["c": true]])
        assertSame(try read(text), foundation(Array(text.utf8)), text)
    }

    // MARK: JSONValueDecoder

    private let event = #"{"id":"evt_1","type":"order.created","restaurant_id":"11","occurred_at":"2026-11-30T15:31:34.250Z","#
        + #""data":{"order_id":"ord_1","status":"open","table":4,"total":12.5,"big":9007199254740993,"items":[{"n":1}]}}"#

    func testAnEventDecodesAsJSONDecoderDecodesIt() throws {
        let new = try JSONValueDecoder.decode(Event.self, from: event)
        let old = try JSONDecoder().decode(Event.self, from: Data(event.utf8))
        XCTAssertEqual(new, old)
        XCTAssertEqual(new.data["big"], .integer(9_007_199_254_740_993))
        XCTAssertEqual(new.occurredAt, RFC3339.date(from: "2026-11-30T15:31:34.250Z"))
    }

    func testABrokenEventFailsAsJSONDecoderFailsIt() throws {
        let broken = [
            #"{"type":"t","restaurant_id":"11","occurred_at":"2026-11-30T15:31:34Z","data":{}}"#,
            #"{"id":7,"type":"t","restaurant_id":"11","occurred_at":"2026-11-30T15:31:34Z","data":{}}"#,
            #"{"id":null,"type":"t","restaurant_id":"11","occurred_at":"2026-11-30T15:31:34Z","data":{}}"#,
            #"{"id":"e","type":"t","restaurant_id":"11","occurred_at":"yesterday","data":{}}"#,
            #"{"id":"e","type":"t","restaurant_id":"11","occurred_at":"2026-11-30T15:31:34Z","data":[]}"#,
            #"{"id":"e","type":"t","restaurant_id":"11","occurred_at":"2026-11-30T15:31:34Z","data":null}"#,
            #"["id"]"#, #"{"id":"e","#,
        ]
        for text in broken {
            let new = Result { try JSONValueDecoder.decode(Event.self, from: text) }
            let old = Result { try JSONDecoder().decode(Event.self, from: Data(text.utf8)) }
            guard case .failure(let newError as DecodingError) = new, case .failure(let oldError as DecodingError) = old else {
                XCTFail("\(text): \(new) vs \(old)")
                continue
            }
            XCTAssertEqual(kind(newError), kind(oldError), text)
            XCTAssertEqual(ResponseDecoding.jsonPath(path(newError)), ResponseDecoding.jsonPath(path(oldError)), text)
        }
    }

    func testModelsWithArraysNumbersAndNestedObjectsDecodeAlike() throws {
        struct Line: Codable, Equatable { var n: Int8; var price: Float; var tags: [String]?; var at: Date; var raw: Data }
        struct Doc: Codable, Equatable { var lines: [Line]; var extra: JSONValue; var maybe: Int?; var url: URL }
        let text = #"{"lines":[{"n":3,"price":1.25,"tags":["a"],"at":12.5,"raw":"AQI="},{"n":-1,"price":2,"at":0,"raw":""}],"#
            + #""extra":{"k":[1,2.5]},"maybe":null,"url":"https://example.com/a"}"#
        XCTAssertEqual(try JSONValueDecoder.decode(Doc.self, from: text), try JSONDecoder().decode(Doc.self, from: Data(text.utf8)))
        // A number the member's type cannot hold is named at its member (Linux's JSONDecoder says "not valid JSON" at $).
        for (bad, number) in [(#"{"lines":[{"n":300}]}"#, "300"), (#"{"lines":[{"n":1.5}]}"#, "1.5")] {
            XCTAssertThrowsError(try JSONValueDecoder.decode(Doc.self, from: bad)) { error in
                guard case .dataCorrupted(let context)? = error as? DecodingError else { return XCTFail("\(error)") }
                XCTAssertEqual(ResponseDecoding.jsonPath(context.codingPath), "$.lines[0].n")
                XCTAssertEqual(context.debugDescription, "Parsed JSON number <\(number)> does not fit in Int8.")
            }
        }
        for bad in [#"{"lines":{}}"#, #"{"lines":[1]}"#] {
            let new = Result { try JSONValueDecoder.decode(Doc.self, from: bad) }
            let old = Result { try JSONDecoder().decode(Doc.self, from: Data(bad.utf8)) }
            guard case .failure(let newError as DecodingError) = new, case .failure(let oldError as DecodingError) = old else {
                XCTFail("\(bad): \(new) vs \(old)")
                continue
            }
            XCTAssertEqual(ResponseDecoding.jsonPath(path(newError)), ResponseDecoding.jsonPath(path(oldError)), bad)
        }
    }

    func testWhatOnlyJSONDecoderAcceptsIsDecodedAsBefore() throws {
        // RFC 8259 does not allow a trailing comma; JSONDecoder reads it, so the decode does too.
        let trailing = #"{"id":"e","type":"t","restaurant_id":"11","occurred_at":"2026-11-30T15:31:34Z","data":{"a":[1,],},}"#
        XCTAssertThrowsError(try read(trailing))
        XCTAssertEqual(try JSONValueDecoder.decode(Event.self, from: trailing),
                       try JSONDecoder().decode(Event.self, from: Data(trailing.utf8)))
        // JSONDecoder never reads the value under a repeated key, so it does not see that it is broken.
        let shadowed = Array(#"{"a":1,"a":["\x",1e400]}"#.utf8)
        XCTAssertThrowsError(try read(shadowed))
        let value = try shadowed.withUnsafeBufferPointer { try JSONValueDecoder.decode(JSONValue.self, from: $0) }
        XCTAssertEqual(value, foundation(shadowed))
        // Refused by both: the reader's error, which names the byte.
        XCTAssertThrowsError(try JSONValueDecoder.decode(Event.self, from: #"{"id":"e" "type":"t"}"#)) { error in
            guard case .dataCorrupted(let context)? = error as? DecodingError else { return XCTFail("\(error)") }
            XCTAssertEqual(context.debugDescription, "The given data was not valid JSON: expected ',' or '}' at byte 10.")
        }
    }

    private func kind(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch: return "typeMismatch"
        case .valueNotFound: return "valueNotFound"
        case .keyNotFound: return "keyNotFound"
        case .dataCorrupted: return "dataCorrupted"
        @unknown default: return "other"
        }
    }

    private func path(_ error: DecodingError) -> [any CodingKey] {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): return context.codingPath
        case .keyNotFound(let key, let context): return context.codingPath + [key]
        @unknown default: return []
        }
    }
}
