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
/// | `expires_at`      | string, RFC 3339 | when the access token expires |
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
/// Before 1.0.0 the cursors lived in one object, `"events_cursor": {"events_cursor:11": "…"}`. That layout is still
/// read (a cursor found only there is used) and the next write moves its cursors to their own members.
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
    mutating func replaceConnection(with response: TokenResponse, now: Date) -> String? {
        let replaced = response.refreshToken == refreshToken ? nil : parkRefreshToken()
        forgetConnection()
        apply(response, now: now)
        return replaced
    }

    /// Stores a token answer. A missing `refresh_token` keeps the one we have: the server leaves it out when
    /// the old one stays valid, and dropping it would unpair the device at the next expiry.
    mutating func apply(_ response: TokenResponse, now: Date) {
        accessToken = response.accessToken
        if let refresh = response.refreshToken { refreshToken = refresh }
        expiresAt = now.addingTimeInterval(TimeInterval(response.expiresIn))
        tokenType = response.tokenType
        let granted = response.scope.split(separator: " ").map(String.init)
        if !granted.isEmpty { scopes = granted }
        if let restaurant = response.restaurantId { restaurantID = restaurant }
        if let device = response.deviceId { deviceID = device }
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
