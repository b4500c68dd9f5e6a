import XCTest
@testable import ProfirestAPI

/// `JSONWriter` writes the bytes `JSONEncoder` with sorted keys and unescaped slashes writes, so that the state
/// document keeps its exact format.
final class JSONWriterTests: XCTestCase {
    private func encoder(_ value: JSONValue) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    func testWritesJSONEncodersBytes() throws {
        let strings = ["", "a/b", "q\"\\", "\n\r\t\u{08}\u{0C}", "\u{0}\u{1}\u{1F}\u{7F}", "é😀\u{2028}\u{FEFF}\u{10FFFF}"]
        let keys = ["b", "B", "a", "a10", "a9", "Z", "_", ":", "é", "e", "events_cursor", "events_cursor:11", "😀", ""]
        var object: [String: JSONValue] = [:]
        for (n, key) in keys.enumerated() { object[key] = n % 2 == 0 ? .string(strings[n % strings.count]) : .integer(n - 7) }
        object["nested"] = ["list": [nil, true, false, 0, .integer(.max), .integer(.min), "x"], "empty": [:], "none": []]
        let value = JSONValue.object(object)
        XCTAssertEqual(JSONWriter.write(value), try encoder(value))
        for string in strings { XCTAssertEqual(JSONWriter.write(.string(string)), try encoder(.string(string)), string) }
    }

    func testLeavesDecimalsToJSONEncoder() {
        XCTAssertNil(JSONWriter.write(["a": [1.5]]))
        XCTAssertEqual(JSONWriter.write(["a": [1]]), #"{"a":[1]}"#)
    }

    func testTheStateDocumentIsWrittenAsBefore() throws {
        var state = StoredState()
        state.accessToken = "at/1"
        state.refreshToken = "rt\"2"
        state.expiresAt = Date(timeIntervalSince1970: 1_795_000_000)
        state.tokenType = "Bearer"
        state.restaurantID = "11"
        state.scopes = ["events:read", "orders:write"]
        state.eventsCursor = ["events_cursor": "c1", "events_cursor:11": "c2"]
        state.unknown = ["zz_future": ["n": 1, "s": "é"]]
        let text = try state.encoded()
        var members = state.unknown
        members["version"] = .integer(state.version)
        members["access_token"] = "at/1"
        members["refresh_token"] = "rt\"2"
        members["expires_at"] = .string(RFC3339.string(from: state.expiresAt!))
        members["token_type"] = "Bearer"
        members["restaurant_id"] = "11"
        members["scopes"] = ["events:read", "orders:write"]
        members["events_cursor"] = "c1"
        members["events_cursor:11"] = "c2"
        XCTAssertEqual(text, try encoder(.object(members)))
        XCTAssertEqual(try StoredState.decode(text, location: "test"), state)
        // An unknown member holding a decimal goes through JSONEncoder, as before.
        state.unknown = ["zz_future": 2.5]
        XCTAssertEqual(try StoredState.decode(try state.encoded(), location: "test"), state)
    }

    /// Replacing a top-level string member gives exactly what writing the changed object gives; a member of the
    /// same name deeper down, in a key's or a value's text, or under another spelling is never the one replaced.
    func testReplacesOnlyTopLevelStringMembers() throws {
        let lookalikes: [(String, [String: String], String?)] = [
            (#"{"c":"1"}"#, ["c": "2"], #"{"c":"2"}"#),
            (#"{"a":{"c":"1"},"c":"2"}"#, ["c": "3"], #"{"a":{"c":"1"},"c":"3"}"#),
            (#"{"a":[{"c":"1"}],"c":"2"}"#, ["c": "3"], #"{"a":[{"c":"1"}],"c":"3"}"#),
            (#"{"a":"\"c\":\"1\"","c":"2"}"#, ["c": "3"], #"{"a":"\"c\":\"1\"","c":"3"}"#),
            (#"{"a\\":"c","c":"x\\"}"#, ["c": "q\"\\"], #"{"a\\":"c","c":"q\"\\"}"#),
            (#"{"a":{"c":"1"}}"#, ["c": "3"], nil),
            (#"{"a":"c"}"#, ["c": "3"], nil),
            (#"{"C":"1"}"#, ["c": "3"], nil),
            (#"{"c ":"1"}"#, ["c": "3"], nil),
            (#"{"c":1}"#, ["c": "3"], nil),
            (#"{"c":null}"#, ["c": "3"], nil),
            (#"{"c":["1"]}"#, ["c": "3"], nil),
            (#"["c","1"]"#, ["c": "3"], nil),
            (#"{"c":"1"#, ["c": "3"], nil),
            ("", ["c": "3"], nil),
            (#"{"b":"1","c":"2"}"#, ["b": "x", "c": "y"], #"{"b":"x","c":"y"}"#),
            (#"{"b":"1","c":"2"}"#, ["b": "x", "d": "y"], nil),
        ]
        for (text, changes, expected) in lookalikes {
            XCTAssertEqual(JSONWriter.replacingTopLevelStrings(in: text, changes), expected, "\(text) \(changes)")
        }
    }

    /// State documents of every shape, their cursors changed at random: the replaced text is the changed document's.
    func testReplacingCursorsWritesTheChangedDocument() throws {
        var random = SystemRandomNumberGenerator()
        let strings = ["", "c/1", "q\"\\", "\n\t\u{1}", "é😀", "events_cursor:11", #""events_cursor:11":"x""#]
        for round in 0..<500 {
            var state = StoredState()
            if Bool.random(using: &random) { state.accessToken = strings.randomElement(using: &random) }
            if Bool.random(using: &random) { state.restaurantID = "11" }
            if Bool.random(using: &random) { state.expiresAt = Date(timeIntervalSince1970: 1_795_000_000.5) }
            let keys = ["events_cursor", "events_cursor:11", "events_cursor:11:a,b", "events_cursor:é\"", "events_cursor:\\"]
            for key in keys where Bool.random(using: &random) { state.eventsCursor[key] = strings.randomElement(using: &random) }
            if Bool.random(using: &random) {
                // Another library's members, some of them named like ours one level down.
                state.unknown["a_nested"] = .object(Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.string("n")) }))
                state.unknown["zz"] = ["events_cursor", ["events_cursor:11": "m"]]
            }
            var changed = state
            var changes: [String: String] = [:]
            for key in state.eventsCursor.keys where Bool.random(using: &random) {
                let value = strings.randomElement(using: &random)! + "\(round)"
                changed.eventsCursor[key] = value
                changes[key] = value
            }
            let text = try state.encoded()
            XCTAssertEqual(JSONWriter.replacingTopLevelStrings(in: text, changes), try changed.encoded(), "round \(round)")
        }
    }
}
