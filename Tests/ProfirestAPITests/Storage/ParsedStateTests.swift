import XCTest
@testable import ProfirestAPI

/// A store remembers the storage's text it last read or wrote with its document, so that a feed's cursor stores do
/// not parse their own writes again; what it reads must still always be what the storage holds now.
final class ParsedStateTests: XCTestCase {
    private let key = "profirest-api:profirest-pos"

    func testCursorStoresAfterTheFirstParseNothing() async throws {
        let storage = MemoryTokenStorage()
        let store = StateStore(storage: storage, key: key)
        // A partner's connection as a consent leaves it: tokens, an expiry to the millisecond, scopes.
        try await store.updateAsync {
            $0.accessToken = "at_1"
            $0.refreshToken = "rt_1"
            $0.tokenType = "Bearer"
            $0.expiresAt = Date(timeIntervalSince1970: 1_800_000_000.123_456)
            $0.scopes = ["a", "b"]
            $0.restaurantID = "11"
        }
        try await store.saveCursor("c0", restaurantID: "11", types: [])
        let parsesAfterFirst = store.parses
        for n in 1...20 { try await store.saveCursor("c\(n)", restaurantID: "11", types: []) }
        XCTAssertEqual(store.cursorReplacements, 20, "each replaced the cursor in the text written before")
        XCTAssertEqual(store.parses, parsesAfterFirst, "each store read the text the one before it wrote")
        XCTAssertEqual(store.cursor(restaurantID: "11", types: []), "c20")
        let stored = try StoredState.decode(try XCTUnwrap(storage.get(key)), location: "test")
        XCTAssertEqual(stored.eventsCursor["events_cursor:11"], "c20")
        XCTAssertEqual(stored.accessToken, "at_1")
    }

    func testAnotherWritersChangeIsReadAndKeptByTheNextCursorStore() async throws {
        let storage = MemoryTokenStorage()
        let store = StateStore(storage: storage, key: key)
        try await store.updateAsync { $0.accessToken = "at_1"; $0.refreshToken = "rt_1" }
        try await store.saveCursor("c1", restaurantID: "11", types: [])
        try await store.saveCursor("c2", restaurantID: "11", types: [])

        // Another process refreshed the tokens (same storage key, a text this store never wrote).
        let other = StateStore(storage: storage, key: key)
        try await other.updateAsync { $0.accessToken = "at_2"; $0.refreshToken = "rt_2" }

        try await store.saveCursor("c3", restaurantID: "11", types: [])
        let stored = try StoredState.decode(try XCTUnwrap(storage.get(key)), location: "test")
        XCTAssertEqual(stored.accessToken, "at_2")
        XCTAssertEqual(stored.refreshToken, "rt_2")
        XCTAssertEqual(stored.eventsCursor["events_cursor:11"], "c3")
        XCTAssertEqual(try store.read().refreshToken, "rt_2")
        XCTAssertEqual(store.snapshot.accessToken, "at_2")

        // And a cursor another client stored for the same subscription is what a read finds.
        try await other.saveCursor("c9", restaurantID: "11", types: [])
        XCTAssertEqual(try store.read().eventsCursor["events_cursor:11"], "c9")
    }

    /// Whatever the storage held and whoever wrote it, a read is exactly what parsing the storage's text gives —
    /// including texts this library writes differently (a finer expiry, another number form, other spacing).
    func testEveryReadIsWhatTheStoragesTextDecodesTo() async throws {
        let storage = MemoryTokenStorage()
        let store = StateStore(storage: storage, key: key)
        func check(_ step: String) throws {
            let read = try store.read()
            let text = try storage.get(key)
            let fresh = try text.map { try StoredState.decode($0, location: "test") } ?? StoredState()
            XCTAssertEqual(read, fresh, step)
        }
        try storage.set(
            key,
            #"{ "version": 1, "access_token": "at_1", "expires_at": "2030-01-01T00:00:00.123456Z", "#
                + #""python_only": {"x": 1.0, "y": [1e2, -0.0]}, "events_cursor:11": "c0" }"#)
        try check("a document another library wrote")
        for n in 1...3 {
            try await store.saveCursor("c\(n)", restaurantID: "11", types: [])
            try check("cursor \(n) over it")
        }
        try await store.updateAsync { $0.expiresAt = Date(timeIntervalSince1970: 1_900_000_000.000_4) }
        try check("a finer expiry than the text keeps")
        for n in 4...6 {
            try await store.saveCursor("c\(n)", restaurantID: "11", types: ["order.created"])
            try check("cursor \(n) after it")
        }
        try await store.saveCursor(nil, restaurantID: "11", types: [])
        try check("a cursor removed")
        try storage.set(key, #"{"version":1,"access_token":"at_9","events_cursor:11":"c7"}"#)
        try check("replaced by another writer")
        try await store.saveCursor("c8", restaurantID: "11", types: [])
        try check("a cursor over it")
        try storage.remove(key)
        try check("removed by another writer")
        try await store.saveCursor("c10", restaurantID: "11", types: [])
        try check("a cursor in an empty storage")
    }

    /// A cursor store over the text this store wrote last replaces the cursor in that text: what the storage then
    /// holds is, byte for byte, the whole document encoded afresh, whatever else the document carries.
    func testACursorStoreWritesTheDocumentsOwnText() async throws {
        let storage = MemoryTokenStorage()
        let store = StateStore(storage: storage, key: key)
        try storage.set(
            key,
            #"{"version":1,"access_token":"at_1","a_other":{"events_cursor:11":"theirs"},"#
                + #""events_cursor:11":"c0","events_cursor:12":"d0","zz":["events_cursor:11"]}"#)
        for n in 1...5 {
            try await store.saveCursor("c\(n)\"\\/é", restaurantID: "11", types: [])
            let text = try XCTUnwrap(storage.get(key))
            let decoded = try StoredState.decode(text, location: "test")
            XCTAssertEqual(text, try decoded.encoded(), "cursor \(n)")
            XCTAssertEqual(decoded.eventsCursor, ["events_cursor:11": "c\(n)\"\\/é", "events_cursor:12": "d0"])
            XCTAssertEqual(decoded.unknown["a_other"], ["events_cursor:11": "theirs"])
            XCTAssertEqual(try store.read(), decoded)
        }
        // The first store encoded the foreign text's document whole; the others replaced the cursor in it.
        XCTAssertEqual(store.cursorReplacements, 4)
        try await store.saveCursor("e1", restaurantID: "13", types: [])
        XCTAssertEqual(store.cursorReplacements, 4, "a new cursor member is written with the whole document")
        let text = try XCTUnwrap(storage.get(key))
        XCTAssertEqual(try StoredState.decode(text, location: "test").eventsCursor["events_cursor:13"], "e1")
        XCTAssertEqual(text, try StoredState.decode(text, location: "test").encoded())
    }
}

