import Foundation
import XCTest
@testable import ProfirestAPI

// The identity tests' view of the shared `SandboxServer` (SandboxHarness.swift): the admin API in `JSONValue`,
// a paired device's state document written straight into a storage, and clients of the sandbox.
extension SandboxServer {
    /// Starts a sandbox for one test (skipped without one, failed under CI=true, as `init` decides).
    static func start() throws -> SandboxServer { try SandboxServer() }

    /// Calls `/_sandbox/<path>` and returns the JSON answer (null for an empty one); throws on a non-2xx.
    @discardableResult
    func admin(_ method: String, _ path: String, _ body: JSONValue? = nil) async throws -> JSONValue {
        let json = try body.map { try JSONSerialization.jsonObject(with: JSONCoding.encode($0)) }
        guard let answer = try await raw(method, "/_sandbox/" + path, json: json) else { return .null }
        return try JSONDecoder().decode(JSONValue.self, from: JSONSerialization.data(withJSONObject: answer))
    }

    func config(_ values: JSONValue) async throws { try await admin("POST", "config", values) }

    /// `token_refreshes[clientID]` of `GET /_sandbox/stats`.
    func refreshes(_ clientID: String) async throws -> Int {
        try await admin("GET", "stats")["token_refreshes"]?[clientID]?.intValue ?? 0
    }

    /// The pending codes' user codes.
    func pendingCodes() async throws -> [String] {
        (try await admin("GET", "pairings")["data"]?.arrayValue ?? []).compactMap { $0["user_code"]?.stringValue }
    }

    /// A paired device's tokens at once (`POST /_sandbox/tokens`), written into `storage` under `key` as the
    /// state document every Profirest library reads — as if a pairing had just finished.
    @discardableResult
    func pairDevice(
        clientID: String, restaurantID: String = "11", storage: any TokenStorage, key: String? = nil
    ) async throws -> (deviceID: String, accessToken: String) {
        let tokens = try await admin("POST", "tokens", ["client_id": .string(clientID), "restaurant_id": .string(restaurantID)])
        var state = StoredState()
        state.accessToken = tokens["access_token"]?.stringValue
        state.refreshToken = tokens["refresh_token"]?.stringValue
        state.expiresAt = Date().addingTimeInterval(TimeInterval(tokens["expires_in"]?.intValue ?? 1800))
        state.tokenType = "Bearer"
        state.scopes = (tokens["scope"]?.stringValue ?? "").split(separator: " ").map(String.init)
        state.restaurantID = tokens["restaurant_id"]?.stringValue
        state.deviceID = tokens["device_id"]?.stringValue
        try storage.set(key ?? StateStore.defaultKey(clientID: clientID), try state.encoded())
        return (state.deviceID ?? "", state.accessToken ?? "")
    }

    /// A client of this sandbox; `sleep` stays real (the sandbox's intervals are real time).
    func client(
        clientID: String?, clientSecret: String? = nil, storage: any TokenStorage = MemoryTokenStorage(),
        storageKey: String? = nil, timeout: TimeInterval = 10, onUnpaired: (@Sendable (ProfirestAPIError) -> Void)? = nil
    ) -> ProfirestApi {
        ProfirestApi(options: .init(
            baseURL: api, clientID: clientID, clientSecret: clientSecret, language: "en", storage: storage,
            storageKey: storageKey, retries: 2, retryDelay: 0.05, timeout: timeout, onUnpaired: onUnpaired))
    }
}

/// Waits (really, in small steps) until `condition` holds or `seconds` pass.
func waitUntil(_ seconds: TimeInterval, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(nanoseconds: 50_000_000)
    }
    return try await condition()
}
