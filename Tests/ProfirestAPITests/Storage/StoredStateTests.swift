import XCTest
@testable import ProfirestAPI

final class StoredStateTests: XCTestCase {
    private let key = "profirest-api:profirest-pos"

    func testRoundTripUsesTheSharedSnakeCaseKeys() throws {
        var state = StoredState()
        state.accessToken = "at_1"
        state.refreshToken = "rt_1"
        state.expiresAt = Date(timeIntervalSince1970: 1_800_000_000)
        state.tokenType = "Bearer"
        state.scopes = ["restaurants:read", "attendance:punch"]
        state.restaurantID = "11"
        state.deviceID = "dev_7Q2M"
        state.pendingConsent = PendingConsent(
            state: "s", codeVerifier: "v", redirectURI: "app://cb", scope: "orders:read",
            createdAt: Date(timeIntervalSince1970: 1_800_000_000))
        state.eventsCursor = ["events_cursor:11": "c1"]
        let json = try state.encoded()
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        XCTAssertEqual(
            Set(object.keys),
            ["version", "access_token", "refresh_token", "expires_at", "token_type", "scopes", "restaurant_id",
             "device_id", "pending_consent", "events_cursor:11"])
        XCTAssertEqual(object["version"] as? Int, 1)
        XCTAssertEqual(object["expires_at"] as? String, "2027-01-15T08:00:00Z")
        let consent = try XCTUnwrap(object["pending_consent"] as? [String: Any])
        XCTAssertEqual(Set(consent.keys), ["state", "code_verifier", "redirect_uri", "scope", "created_at"])
        XCTAssertEqual(try StoredState.decode(json, location: "test"), state)
    }

    func testUnknownKeysSurviveARewrite() throws {
        let storage = MemoryTokenStorage()
        try storage.set(key, #"{"version":1,"access_token":"at_1","python_only":{"x":[1,2]}}"#)
        let store = StateStore(storage: storage, key: key)
        try store.update { $0.restaurantID = "11" }
        let written = try XCTUnwrap(storage.get(key))
        XCTAssertTrue(written.contains(#""python_only":{"x":[1,2]}"#), written)
        XCTAssertTrue(written.contains(#""restaurant_id":"11""#))
    }

    func testCorruptDocumentIsAnErrorThatDoesNotQuoteIt() throws {
        let storage = MemoryTokenStorage()
        try storage.set(key, #"{"access_token":"at_secret_value","#)
        let store = StateStore(storage: storage, key: key)
        XCTAssertThrowsError(try store.read()) { error in
            let storageError = error as? StorageError
            XCTAssertEqual(storageError?.kind, .corrupt)
            XCTAssertFalse(String(describing: error).contains("at_secret_value"))
        }
        // Not silently empty: an update refuses to overwrite the damaged document.
        XCTAssertThrowsError(try store.update { $0.restaurantID = "11" })
        XCTAssertEqual(try storage.get(key), #"{"access_token":"at_secret_value","#)
        XCTAssertFalse(store.snapshot.hasTokens)
    }

    func testWrongMemberTypesAreCorrupt() {
        for text in [#"[]"#, #"{"scopes":"a b"}"#, #"{"expires_at":"tomorrow"}"#, #"{"access_token":5}"#,
                     #"{"events_cursor":{"k":1}}"#, #"{"events_cursor:11":5}"#, #"{"events_cursor:11":{"a":"b"}}"#,
                     #"{"events_cursor":7}"#, #"{"pending_consent":{"state":"s"}}"#] {
            XCTAssertThrowsError(try StoredState.decode(text, location: "t"), text)
        }
    }

    func testCursorKeySortsAndJoinsTypes() {
        XCTAssertEqual(
            StoredState.cursorKey(restaurantID: "11", types: ["order.status_changed", "kitchen.ticket_updated"]),
            "events_cursor:11:kitchen.ticket_updated,order.status_changed")
        XCTAssertEqual(StoredState.cursorKey(restaurantID: "11", types: []), "events_cursor:11")
        XCTAssertEqual(StoredState.cursorKey(restaurantID: nil, types: []), "events_cursor")
    }

    func testAnswerWithoutRefreshTokenKeepsTheOldOne() {
        var state = StoredState()
        state.refreshToken = "rt_old"
        state.restaurantID = "11"
        let now = Date(timeIntervalSince1970: 1000)
        state.apply(TokenResponse(accessToken: "at_2", tokenType: "Bearer", expiresIn: 1800, scope: "a b"), requestedScope: nil, now: now)
        XCTAssertEqual(state.refreshToken, "rt_old")
        XCTAssertEqual(state.accessToken, "at_2")
        XCTAssertEqual(state.expiresAt, Date(timeIntervalSince1970: 2800))
        XCTAssertEqual(state.scopes, ["a", "b"])
        XCTAssertEqual(state.restaurantID, "11")
    }

    func testForgettingTheConnectionKeepsCursorsAndUnknownKeys() throws {
        let storage = MemoryTokenStorage()
        try storage.set(key, #"{"access_token":"a","refresh_token":"r","restaurant_id":"11","device_id":"d","#
            + #""pending_consent":{"state":"s","code_verifier":"v","redirect_uri":"x"},"#
            + #""events_cursor:11":"c","other":true}"#)
        let store = StateStore(storage: storage, key: key)
        try store.update { $0.forgetConnection() }
        let state = try store.read()
        XCTAssertFalse(state.hasTokens)
        XCTAssertNil(state.restaurantID)
        XCTAssertNil(state.deviceID)
        XCTAssertNil(state.pendingConsent)
        XCTAssertEqual(state.eventsCursor, ["events_cursor:11": "c"])
        XCTAssertEqual(state.unknown["other"], .bool(true))
    }

    func testEmptyDocumentRemovesTheKey() async throws {
        let storage = MemoryTokenStorage()
        let store = StateStore(storage: storage, key: key)
        try store.update { $0.accessToken = "a" }
        XCTAssertNotNil(try storage.get(key))
        try await store.clearTokens()
        XCTAssertNil(try storage.get(key))
    }

    func testUpdateRereadsInsideTheLock() throws {
        let storage = MemoryTokenStorage()
        let store = StateStore(storage: storage, key: key)
        try store.update { $0.accessToken = "a" }
        XCTAssertEqual(store.snapshot.accessToken, "a")
        // Another process writes behind our back; our next update must build on its document.
        let other = StateStore(storage: storage, key: key)
        try other.update { $0.deviceID = "dev_other" }
        try store.update { $0.restaurantID = "11" }
        let state = try store.read()
        XCTAssertEqual(state.deviceID, "dev_other")
        XCTAssertEqual(state.restaurantID, "11")
        XCTAssertEqual(store.snapshot.deviceID, "dev_other")
    }

    func testExclusiveHoldsTheFileLockAcrossAsyncWork() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let storage = FileTokenStorage(path: dir.file("tokens.json"))
        let store = StateStore(storage: storage, key: key)
        let value = try await store.exclusive { access -> String in
            var state = try await access.read()
            await Task.yield()  // the body awaits (a token request) while the lock stays held
            state.accessToken = "at_from_network"
            try await access.write(state)
            return state.accessToken ?? ""
        }
        XCTAssertEqual(value, "at_from_network")
        XCTAssertEqual(try StateStore(storage: FileTokenStorage(path: dir.file("tokens.json")), key: key).read().accessToken,
                       "at_from_network")
    }
}

final class StateStoreCursorTests: XCTestCase {
    private let key = "profirest-api:profirest-kds"

    private func document(_ storage: MemoryTokenStorage) throws -> [String: JSONValue] {
        let text = try XCTUnwrap(storage.get(key))
        guard case .object(let members) = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else {
            throw ProfirestTestFailure("not an object: \(text)")
        }
        return members
    }

    func testCursorIsStoredUnderTheSharedKeyAndSurvivesUnpair() async throws {
        let storage = MemoryTokenStorage()
        let store = StateStore(storage: storage, key: key)
        try await store.saveCursor("c42", restaurantID: "11", types: ["order.created", "kitchen.ticket_updated"])
        XCTAssertEqual(store.cursor(restaurantID: "11", types: ["kitchen.ticket_updated", "order.created"]), "c42")
        // The reference's layout: a top-level member per subscription, holding the cursor string.
        XCTAssertEqual(try document(storage)["events_cursor:11:kitchen.ticket_updated,order.created"], .string("c42"))
        XCTAssertNil(try document(storage)["events_cursor"])
        try await store.clearTokens()
        XCTAssertEqual(store.cursor(restaurantID: "11", types: ["order.created", "kitchen.ticket_updated"]), "c42")
        try await store.saveCursor(nil, restaurantID: "11", types: ["order.created", "kitchen.ticket_updated"])
        XCTAssertNil(try storage.get(key))
    }

    func testEachSubscriptionHasItsOwnTopLevelMember() async throws {
        let storage = MemoryTokenStorage()
        let store = StateStore(storage: storage, key: key)
        try await store.saveCursor("c0", restaurantID: nil, types: [])
        try await store.saveCursor("c1", restaurantID: "11", types: [])
        try await store.saveCursor("c2", restaurantID: "11", types: ["order.created", "kitchen.ticket_updated"])
        let members = try document(storage)
        XCTAssertEqual(members["events_cursor"], .string("c0"))
        XCTAssertEqual(members["events_cursor:11"], .string("c1"))
        XCTAssertEqual(members["events_cursor:11:kitchen.ticket_updated,order.created"], .string("c2"))
        let reread = StateStore(storage: storage, key: key)
        XCTAssertEqual(reread.cursor(restaurantID: nil, types: []), "c0")
        XCTAssertEqual(reread.cursor(restaurantID: "11", types: []), "c1")
        XCTAssertEqual(reread.cursor(restaurantID: "11", types: ["kitchen.ticket_updated", "order.created"]), "c2")
    }
}

extension StateStore {
    /// Forgets the connection (see `StoredState.forgetConnection`; event cursors stay).
    func clearTokens() async throws {
        try await updateAsync { $0.forgetConnection() }
    }
}
