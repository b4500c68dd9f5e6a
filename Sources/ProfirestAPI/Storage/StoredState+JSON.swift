import Foundation

extension StoredState {
    private static let knownKeys: Set<String> = [
        "version", "access_token", "refresh_token", "expires_at", "token_type", "scopes", "restaurant_id",
        "device_id", "pending_consent", "pending_revocations",
    ]

    /// `events_cursor` and every `events_cursor:…`: the members that hold event feed cursors.
    static func isCursorKey(_ key: String) -> Bool {
        key == "events_cursor" || key.hasPrefix("events_cursor:")
    }

    /// Parses a stored document. Anything that is not a JSON object with the documented member types throws
    /// `StorageError(.corrupt)`: treating a damaged document as empty would silently forget the pairing and
    /// then overwrite the evidence. The error never quotes the document, which holds tokens.
    static func decode(_ text: String, location: String) throws -> StoredState {
        func corrupt(_ what: String) -> StorageError {
            StorageError(
                kind: .corrupt, path: location,
                reason: "the stored Profirest state is not valid (\(what)); fix or delete it "
                    + "(deleting it forgets the pairing)")
        }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)),
            case .object(let members) = value
        else { throw corrupt("not a JSON object") }

        func string(_ key: String) throws -> String? {
            switch members[key] {
            case nil, .null?: return nil
            case .string(let s)?: return s
            default: throw corrupt("\(key) is not a string")
            }
        }

        var state = StoredState()
        switch members["version"] {
        case nil, .null?: break
        case let v?:
            guard let n = v.intValue, n >= 1 else { throw corrupt("version is not a positive integer") }
            // A newer library may have written a later version; we keep its number rather than downgrade it.
            state.version = n
        }
        state.accessToken = try string("access_token")
        state.refreshToken = try string("refresh_token")
        state.tokenType = try string("token_type")
        state.restaurantID = try string("restaurant_id")
        state.deviceID = try string("device_id")
        if let text = try string("expires_at") {
            guard let date = RFC3339.date(from: text) else { throw corrupt("expires_at is not an RFC 3339 time") }
            state.expiresAt = date
        }
        switch members["scopes"] {
        case nil, .null?: break
        case .array(let items)?:
            state.scopes = try items.map {
                guard let s = $0.stringValue else { throw corrupt("scopes holds a non-string") }
                return s
            }
        default: throw corrupt("scopes is not an array")
        }
        switch members["pending_revocations"] {
        case nil, .null?: break
        case .array(let items)?:
            state.pendingRevocations = try items.map {
                guard let s = $0.stringValue else { throw corrupt("pending_revocations holds a non-string") }
                return s
            }
        default: throw corrupt("pending_revocations is not an array")
        }
        // Event cursors: one top-level member per subscription, `events_cursor[:restaurant][:types]` → cursor.
        for (key, value) in members where isCursorKey(key) {
            switch value {
            case .null: break
            case .string(let cursor): state.eventsCursor[key] = cursor
            // The layout before 1.0.0, `"events_cursor": {"events_cursor:11": "…"}`: read so an upgrade keeps the
            // feed's place, wherever the new member is absent; the next write moves each cursor to its own member.
            // Only cursor keys are taken from it: any other name there would land on the top level when written.
            case .object(let legacy) where key == "events_cursor":
                for (legacyKey, cursor) in legacy {
                    guard let s = cursor.stringValue else { throw corrupt("events_cursor holds a non-string") }
                    guard isCursorKey(legacyKey), members[legacyKey]?.stringValue == nil else { continue }
                    state.eventsCursor[legacyKey] = s
                }
            default: throw corrupt("an events_cursor member is not a string")
            }
        }
        switch members["pending_consent"] {
        case nil, .null?: break
        case .object(let consent)?:
            guard let s = consent["state"]?.stringValue, let verifier = consent["code_verifier"]?.stringValue,
                let redirect = consent["redirect_uri"]?.stringValue
            else { throw corrupt("pending_consent lacks state, code_verifier or redirect_uri") }
            let created = consent["created_at"]?.stringValue.flatMap(RFC3339.date(from:)) ?? Date(timeIntervalSince1970: 0)
            state.pendingConsent = PendingConsent(
                state: s, codeVerifier: verifier, redirectURI: redirect, scope: consent["scope"]?.stringValue ?? "",
                createdAt: created)
        default: throw corrupt("pending_consent is not an object")
        }
        state.unknown = members.filter { !knownKeys.contains($0.key) && !isCursorKey($0.key) }
        return state
    }

    /// The document as compact JSON with sorted keys (stable output keeps file diffs and tests readable).
    func encoded() throws -> String {
        var members = unknown
        members["version"] = .integer(version)
        func put(_ key: String, _ value: String?) { if let value { members[key] = .string(value) } }
        put("access_token", accessToken)
        put("refresh_token", refreshToken)
        put("expires_at", expiresAt.map(RFC3339.string(from:)))
        put("token_type", tokenType)
        put("restaurant_id", restaurantID)
        put("device_id", deviceID)
        if !scopes.isEmpty { members["scopes"] = .array(scopes.map(JSONValue.string)) }
        if !pendingRevocations.isEmpty { members["pending_revocations"] = .array(pendingRevocations.map(JSONValue.string)) }
        for (key, cursor) in eventsCursor where Self.isCursorKey(key) { members[key] = .string(cursor) }
        if let consent = pendingConsent {
            members["pending_consent"] = .object([
                "state": .string(consent.state), "code_verifier": .string(consent.codeVerifier),
                "redirect_uri": .string(consent.redirectURI), "scope": .string(consent.scope),
                "created_at": .string(RFC3339.string(from: consent.createdAt)),
            ])
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(JSONValue.object(members)), as: UTF8.self)
    }
}
