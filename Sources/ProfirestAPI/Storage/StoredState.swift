import Foundation

/// The state document one connection keeps in its `TokenStorage`, as JSON under the key
/// `profirest-api:<client_id>` (or the `storageKey` option).
///
/// Every Profirest library reads and writes the same keys, so a token file can move between a Swift service and,
/// say, a Python tool of the same connection:
///
/// | key               | JSON type        | meaning |
/// |-------------------|------------------|---------|
/// | `version`         | integer          | document format, 1 |
/// | `access_token`    | string           | the current access token |
/// | `refresh_token`   | string           | the refresh token (single-use for public clients) |
/// | `expires_at`      | string, RFC 3339 | when the access token expires; absent when the server gave no `expires_in` |
/// | `token_type`      | string           | always `Bearer` |
/// | `scopes`          | array of strings | the granted scopes |
/// | `restaurant_id`   | string           | a paired device's restaurant |
/// | `device_id`       | string           | a paired device's id |
/// | `pending_consent` | object           | a partner consent between redirect and callback: `state`, `code_verifier`, `redirect_uri`, `scope`, `created_at` (RFC 3339) |
/// | `events_cursor[:restaurant][:types]` | string | an event feed's cursor, one member per subscription: `events_cursor`, `events_cursor:11`, `events_cursor:11:kitchen.ticket_updated,order.created` (see ``cursorKey(restaurantID:types:)``) |
/// | `pending_revocations` | array of strings | refresh tokens of grants this storage gave up (unpaired, or replaced by a new pairing or consent) whose revocation the server has not confirmed yet |
///
/// Keys this library does not know are kept as they are when the document is written back: another library
/// sharing the storage may have put them there. A missing key means "none"; `null` is read the same way.
///
/// ```swift
/// var state = StoredState(); state.accessToken = "at_1"; let json = try state.encoded()
/// ```
struct StoredState: Sendable, Equatable {
    /// The format this library writes.
    static let currentVersion = 1

    var version: Int = StoredState.currentVersion
    var accessToken: String?
    var refreshToken: String?
    var expiresAt: Date?
    var tokenType: String?
    var scopes: [String] = []
    var restaurantID: String?
    var deviceID: String?
    var pendingConsent: PendingConsent?
    var eventsCursor: [String: String] = [:]
    /// Refresh tokens to revoke, oldest first (see `GrantRevocation`).
    var pendingRevocations: [String] = []
    /// Members written by someone else, carried through untouched.
    var unknown: [String: JSONValue] = [:]

    init() {}

    /// True when requests can be authorized: an access token or a refresh token to get one.
    var hasTokens: Bool { accessToken != nil || refreshToken != nil }

    /// The access token while it can still be sent: more than `margin` before its expiry (or with no expiry known:
    /// nothing to anticipate, a 401 will tell); nil when it is missing or due for a refresh.
    func freshAccessToken(now: Date, margin: TimeInterval) -> String? {
        guard let accessToken else { return nil }
        guard let expiresAt else { return accessToken }
        return now.addingTimeInterval(margin) < expiresAt ? accessToken : nil
    }

    /// Forgets everything that ties the storage to a pairing or a connection.
    ///
    /// Pending revocations stay: they are what is left to end on the server. Event cursors stay: they are keyed by restaurant, are no credential, and keeping them lets a device that is
    /// paired again to the same restaurant continue the feed where it stopped instead of skipping to its end
    /// (an outdated cursor is answered with `cursor_expired`, which the feed reader already handles).
    mutating func forgetConnection() {
        accessToken = nil
        refreshToken = nil
        expiresAt = nil
        tokenType = nil
        scopes = []
        restaurantID = nil
        deviceID = nil
        pendingConsent = nil
    }

    /// The most pending revocations kept: a device offline through many unpairings must not grow its document
    /// without bound; the oldest grants dropped from the list still end when they expire on the server.
    static let pendingRevocationLimit = 20

    /// Moves the refresh token (if any) to the pending revocations, in the same write that gives it up, so a
    /// process that dies before the revocation leaves it for the next one to revoke. Returns it.
    @discardableResult
    mutating func parkRefreshToken() -> String? {
        guard let token = refreshToken else { return nil }
        refreshToken = nil
        if !pendingRevocations.contains(token) { pendingRevocations.append(token) }
        if pendingRevocations.count > Self.pendingRevocationLimit {
            pendingRevocations.removeFirst(pendingRevocations.count - Self.pendingRevocationLimit)
        }
        return token
    }

    /// Replaces the connection with a new pairing's or consent's tokens, parking the replaced refresh token for
    /// revocation: the old grant would otherwise stay alive with nobody left holding it. Returns the parked token.
    /// `requestedScope` is the scope the pairing or consent asked for (see `apply`).
    mutating func replaceConnection(with response: TokenResponse, requestedScope: String?, now: Date) -> String? {
        let replaced = response.refreshToken == refreshToken ? nil : parkRefreshToken()
        forgetConnection()
        apply(response, requestedScope: requestedScope, now: now)
        return replaced
    }

    /// Stores a token answer, reading its optional members as RFC 6749 5.1 and 6 define them:
    /// - no `refresh_token`: the one we have stays (the server leaves it out when the old one stays valid, and
    ///   dropping it would unpair the device at the next expiry);
    /// - no `expires_in`: the expiry is unknown, so nothing is renewed ahead of time and a 401 `invalid_token` asks
    ///   for the refresh;
    /// - no `scope`: exactly what was asked for, `requestedScope`; nil (a refresh asks for none) keeps the scopes
    ///   granted before.
    ///
    /// `token_type` has been checked to be Bearer in some letter case (`OAuthEndpoint.token`) and is kept as `Bearer`.
    mutating func apply(_ response: TokenResponse, requestedScope: String?, now: Date) {
        accessToken = response.accessToken
        if let refresh = response.refreshToken { refreshToken = refresh }
        expiresAt = response.expiresIn.map { now.addingTimeInterval(TimeInterval($0)) }
        tokenType = "Bearer"
        let granted = Self.scopeList(response.scope ?? requestedScope ?? "")
        if !granted.isEmpty { scopes = granted }
        if let restaurant = response.restaurantId { restaurantID = restaurant }
        if let device = response.deviceId { deviceID = device }
    }

    /// The scopes of a space-delimited `scope` (RFC 6749 3.3), each once, in their order: runs of spaces and a
    /// scope named twice are the same list.
    static func scopeList(_ scope: String) -> [String] {
        var seen = Set<String>()
        return scope.split(separator: " ").map(String.init).filter { seen.insert($0).inserted }
    }

    /// The state document's member that holds a feed's cursor: `events_cursor[:restaurant][:types]`, types sorted
    /// and comma-joined so the same subscription finds its cursor whatever order the app lists them in:
    /// `cursorKey(restaurantID: "11", types: ["order.created"])` is `events_cursor:11:order.created`.
    static func cursorKey(restaurantID: String?, types: [String]) -> String {
        var key = "events_cursor"
        if let restaurantID, !restaurantID.isEmpty { key += ":" + restaurantID }
        let sorted = types.filter { !$0.isEmpty }.sorted()
        if !sorted.isEmpty { key += ":" + sorted.joined(separator: ",") }
        return key
    }
}

/// A partner consent that was started by `authorizationURL` and waits for its callback.
struct PendingConsent: Sendable, Equatable {
    var state: String
    var codeVerifier: String
    var redirectURI: String
    var scope: String
    var createdAt: Date
}

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
        guard let value = try? JSONValueDecoder.decode(JSONValue.self, from: text),
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
        // Written after every batch of events: JSONWriter writes JSONEncoder's bytes at a fraction of its cost; a
        // decimal in an unknown member (no member of ours is one) is left to JSONEncoder.
        if let text = JSONWriter.write(.object(members)) { return text }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(JSONValue.object(members)), as: UTF8.self)
    }
}

// What `print`, `dump` and debugger summaries show of a state document: whether it is paired and for what, never a
// token, the PKCE verifier or a cursor.
extension StoredState: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String {
        let expiry = expiresAt.map(RFC3339.string(from:)) ?? "none"
        return "StoredState(paired: \(hasTokens), expiresAt: \(expiry), restaurantID: \(restaurantID ?? "none"), "
            + "deviceID: \(deviceID ?? "none"), scopes: \(scopes), pendingConsent: \(pendingConsent != nil), "
            + "cursors: \(eventsCursor.count), pendingRevocations: \(pendingRevocations.count))"
    }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: ["summary": description]) }
}
