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
}
