import Foundation
import XCTest
@testable import ProfirestAPI

/// Builds the pieces of a wired client: the public options with a virtual clock, a state document in memory,
/// and the real identity behind the pipeline (only the attempt timer and jitter are pinned).
struct WiredClient {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// What the client's `sleep` does with the virtual clock.
    enum Sleeping {
        /// Moves the clock on at once, so retries need no driving. Every sleeper moves time for all, though, and the
        /// staff session's timer sleeps until the session's end: with it, a sign-in would run out at once.
        case passesTimeAtOnce
        /// Waits until the test moves the clock past its end (`clock.advance`, `clock.expectSleep`).
        case untilAdvanced
    }

    let api: ProfirestApi
    let storage: MemoryTokenStorage
    let clock: FeedClock

    init(
        transport: any HTTPTransport, clientID: String? = "profirest-pos", clientSecret: String? = nil,
        accessToken: String? = nil, tokens: (access: String, refresh: String?, expiresIn: TimeInterval)? = nil,
        retries: Int = 3, onUnpaired: (@Sendable (ProfirestAPIError) -> Void)? = nil,
        onStaffExpired: (@Sendable (StaffInfo) -> Void)? = nil, sleeping: Sleeping = .passesTimeAtOnce
    ) throws {
        let clock = FeedClock(changes: Changes(), origin: Self.start)
        let storage = MemoryTokenStorage()
        if let tokens, let clientID {
            var state = StoredState()
            state.accessToken = tokens.access
            state.refreshToken = tokens.refresh
            state.expiresAt = Self.start.addingTimeInterval(tokens.expiresIn)
            state.restaurantID = "11"
            try storage.set(StateStore.defaultKey(clientID: clientID), try state.encoded())
        }
        let sleep: @Sendable (TimeInterval) async throws -> Void
        switch sleeping {
        case .passesTimeAtOnce: sleep = { seconds in clock.advance(seconds) }
        case .untilAdvanced: sleep = { seconds in try await clock.sleep(seconds) }
        }
        let options = ProfirestApi.Options(
            baseURL: "https://api.mujprofirest.cz", clientID: clientID, clientSecret: clientSecret,
            accessToken: accessToken, storage: storage, retries: retries, onUnpaired: onUnpaired,
            onStaffExpired: onStaffExpired, transport: transport, clock: { clock.now }, sleep: sleep)
        api = ProfirestApi(options: options, authorizer: nil, attemptTimer: { _ in try await Task.sleep(nanoseconds: 60_000_000_000) }, random: { 0.5 })
        self.storage = storage
        self.clock = clock
    }
}

/// Token endpoint answers and API bodies used by the wiring tests.
enum Answers {
    static func tokens(_ access: String, refresh: String? = "rt_next_0123456789", expiresIn: Int = 1800) -> Step {
        var body: [String: JSONValue] = [
            "access_token": .string(access), "token_type": "Bearer", "expires_in": .integer(expiresIn),
            "scope": "restaurants:read staff:authenticate receipts:write", "restaurant_id": "11", "device_id": "dev_7Q2M",
        ]
        if let refresh { body["refresh_token"] = .string(refresh) }
        return .json(200, .object(body))
    }

    static func oauth(_ error: String, status: Int = 400) -> Step {
        .json(status, ["error": .string(error), "error_description": "scripted"])
    }

    static func staffSession(token: String, idle: Int = 300, maxHours: Double = 12) -> Step {
        let end = RFC3339.string(from: WiredClient.start.addingTimeInterval(maxHours * 3600))
        return .json(201, [
            "token": .string(token), "restaurant_id": "11", "idle_timeout_seconds": .integer(idle),
            "max_expires_at": .string(end),
            "employee": ["id": "emp_1", "name": "Jana Nováková", "role": "manager"],
        ])
    }

    static let connection = Step.json(200, [
        "client_id": "profirest-pos", "kind": "device", "restaurant_id": "11", "restaurants": [], "scopes": ["restaurants:read"],
    ])
}

/// Counts calls of a callback and keeps what it was given.
final class CallRecorder<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `values` is behind its lock.
    private let values = Locked([Value]())
    func record(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

extension HTTPRequest {
    /// The `application/x-www-form-urlencoded` body as a dictionary.
    var form: [String: String] {
        let text = String(decoding: body ?? Data(), as: UTF8.self)
        var out: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            out[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return out
    }

    var bearer: String? {
        guard let value = header("Authorization"), value.hasPrefix("Bearer ") else { return nil }
        return String(value.dropFirst(7))
    }
}
