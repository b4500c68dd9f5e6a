import XCTest
@testable import ProfirestAPI
import ProfirestTesting

final class PairingTests: XCTestCase {
    private let key = "profirest-api:profirest-dochazka"
    private let clock = VirtualClock()
    private let sleeps = SleepLog()

    /// A context on the virtual clock whose sleeps pass at once (recorded in `sleeps`), or with `sleep` instead.
    private func context(
        _ endpoint: ScriptedEndpoint, store: StateStore? = nil, clientID: String? = "profirest-dochazka",
        sleep: (@Sendable (TimeInterval) async throws -> Void)? = nil
    ) -> Core {
        let clock = self.clock
        let sleeps = self.sleeps
        return identityCore(
            store: store ?? StateStore(storage: MemoryTokenStorage(), key: key), endpoint: endpoint, clientID: clientID,
            clock: clock.function,
            sleep: sleep ?? { seconds in
                try Task.checkCancellation()
                sleeps.record(seconds)
                clock.advance(seconds)
            })
    }

    /// A sleep that only ends by cancellation: an hour that never passes, since these tests cancel right away.
    private static let untilCancelled: @Sendable (TimeInterval) async throws -> Void = { _ in
        try await Task.sleep(nanoseconds: 3_600_000_000_000)
    }

    private func endpoint(_ script: [ScriptedEndpoint.Answer], expiresIn: Int = 600) -> ScriptedEndpoint {
        let endpoint = ScriptedEndpoint(script)
        endpoint.deviceAnswer = DeviceAuthorization(
            deviceCode: "dc_secret_device_code", userCode: "KXCB-TQPW", verificationUri: "https://admin.example/zarizeni",
            expiresIn: expiresIn, interval: 5, verificationUriComplete: "https://admin.example/zarizeni?code=KXCB-TQPW")
        return endpoint
    }

    private func start(_ context: Core) async throws -> Pairing {
        try await Pairing.start(
            scope: "restaurants:read attendance:punch", deviceName: "Píchačka", devicePlatform: "linux",
            appVersion: "1.0.0", core: context)
    }

    private func tokenRequests(_ endpoint: ScriptedEndpoint) -> [[String: String]] {
        endpoint.allForms.filter { $0["grant_type"] != nil }
    }

    func testPendingTwiceThenConnectedStoresTokens() async throws {
        let endpoint = endpoint([
            .oauth("authorization_pending"), .oauth("authorization_pending"),
            .tokens(.sample("at_1", refresh: "rt_1")),
        ])
        let store = StateStore(storage: MemoryTokenStorage(), key: key)
        let ctx = context(endpoint, store: store)
        let pairing = try await start(ctx)
        XCTAssertEqual(pairing.userCode, "KXCB-TQPW")
        XCTAssertEqual(pairing.verificationURIComplete, "https://admin.example/zarizeni?code=KXCB-TQPW")
        XCTAssertEqual(pairing.expiresAt, clock.now.addingTimeInterval(600))
        XCTAssertEqual(endpoint.allForms.first, [
            "client_id": "profirest-dochazka", "scope": "restaurants:read attendance:punch", "device_name": "Píchačka",
            "device_platform": "linux", "app_version": "1.0.0",
        ])
        let generation = store.generation
        try await pairing.connected()
        XCTAssertEqual(sleeps.all, [5, 5, 5])
        XCTAssertEqual(tokenRequests(endpoint).count, 3)
        XCTAssertEqual(tokenRequests(endpoint).last, [
            "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": "dc_secret_device_code",
            "client_id": "profirest-dochazka",
        ])
        let state = try store.read()
        XCTAssertEqual(state.accessToken, "at_1")
        XCTAssertEqual(state.refreshToken, "rt_1")
        XCTAssertEqual(state.restaurantID, "11")
        XCTAssertEqual(state.deviceID, "dev_7Q2M")
        XCTAssertEqual(state.scopes, ["restaurants:read", "attendance:punch"])
        XCTAssertNotEqual(store.generation, generation)
        let again = try await pairing.poll()
        XCTAssertTrue(again)
    }

    func testSlowDownAddsFiveSecondsForGood() async throws {
        let endpoint = endpoint([
            .oauth("authorization_pending"), .oauth("slow_down"), .oauth("authorization_pending"),
            .tokens(.sample("at_1", refresh: "rt_1")),
        ])
        let pairing = try await start(context(endpoint))
        try await pairing.connected()
        XCTAssertEqual(sleeps.all, [5, 5, 10, 10])
        XCTAssertEqual(pairing.state.interval, 10)
    }

    func testNetworkErrorMidPollIsSurvived() async throws {
        let endpoint = endpoint([
            .oauth("authorization_pending"), .failure(URLError(.notConnectedToInternet)),
            .failure(URLError(.timedOut)), .tokens(.sample("at_1", refresh: "rt_1")),
        ])
        let pairing = try await start(context(endpoint))
        try await pairing.connected()
        XCTAssertEqual(tokenRequests(endpoint).count, 4)
        XCTAssertEqual(sleeps.all, [5, 5, 5, 5])
    }

    func testDeniedThrowsAccessDenied() async throws {
        let endpoint = endpoint([.oauth("authorization_pending"), .oauth("access_denied")])
        let store = StateStore(storage: MemoryTokenStorage(), key: key)
        let pairing = try await start(context(endpoint, store: store))
        do {
            try await pairing.connected()
            XCTFail("expected access_denied")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "access_denied")
        }
        XCTAssertFalse(try store.read().hasTokens)
    }

    func testServerSaysExpired() async throws {
        let endpoint = endpoint([.oauth("expired_token")])
        let pairing = try await start(context(endpoint))
        do {
            try await pairing.connected()
            XCTFail("expected expired_token")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "expired_token")
        }
    }

    func testLocalExpiryStopsWithoutAnotherRequest() async throws {
        let endpoint = endpoint([.oauth("authorization_pending")], expiresIn: 12)
        let pairing = try await start(context(endpoint))
        do {
            try await pairing.connected()
            XCTFail("expected expired_token")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "expired_token")
        }
        // Polls at 5 s and 10 s, then waits only the 2 s left and reports the expiry without a third request.
        XCTAssertEqual(sleeps.all, [5, 5, 2])
        XCTAssertEqual(tokenRequests(endpoint).count, 2)
        do {
            _ = try await pairing.poll()
            XCTFail("expected expired_token")
        } catch let e as ProfirestOAuthError {
            XCTAssertEqual(e.error, "expired_token")
        }
        XCTAssertEqual(tokenRequests(endpoint).count, 2)
    }

    func testCancellingTheTaskStopsPromptly() async throws {
        let pairing = try await start(context(endpoint([.oauth("authorization_pending")]), sleep: Self.untilCancelled))
        let waiting = Task { try await pairing.connected() }
        waiting.cancel()
        await assertCancelled { try await waiting.value }
    }

    func testCancelMethodStopsConnected() async throws {
        let pairing = try await start(context(endpoint([.oauth("authorization_pending")]), sleep: Self.untilCancelled))
        let waiting = Task { try await pairing.connected() }
        pairing.cancel()
        await assertCancelled { try await waiting.value }
        await assertCancelled { _ = try await pairing.poll() }
    }

    func testResumeFromEncodedState() async throws {
        let first = endpoint([.oauth("authorization_pending"), .oauth("slow_down")])
        let pairing = try await start(context(first))
        clock.advance(5)
        _ = try await pairing.poll()
        clock.advance(5)
        _ = try await pairing.poll()
        let data = try JSONEncoder().encode(pairing.state)
        let json = String(decoding: data, as: UTF8.self)
        XCTAssertTrue(json.contains(#""device_code":"dc_secret_device_code""#), json)
        XCTAssertTrue(json.contains(#""expires_at":"2027-01-15T08:10:00Z""#), json)

        // The app was terminated; a new process resumes.
        let restored = try JSONDecoder().decode(PairingState.self, from: data)
        XCTAssertEqual(restored, pairing.state)
        XCTAssertEqual(restored.interval, 10)
        let second = endpoint([.tokens(.sample("at_1", refresh: "rt_1"))])
        let store = StateStore(storage: MemoryTokenStorage(), key: key)
        let resumed = try Pairing.resume(restored, core: context(second, store: store))
        XCTAssertEqual(resumed.userCode, "KXCB-TQPW")
        let connected = try await resumed.poll()
        XCTAssertTrue(connected)
        XCTAssertEqual(try store.read().accessToken, "at_1")
    }

    func testPollNeverFasterThanTheInterval() async throws {
        let endpoint = endpoint([.oauth("authorization_pending")])
        let pairing = try await start(context(endpoint))
        let early = try await pairing.poll()
        XCTAssertFalse(early)
        XCTAssertEqual(tokenRequests(endpoint).count, 0)
        clock.advance(5)
        _ = try await pairing.poll()
        _ = try await pairing.poll()
        XCTAssertEqual(tokenRequests(endpoint).count, 1)
    }

    func testPairWithoutClientIDIsAUsageError() async throws {
        let endpoint = endpoint([])
        do {
            _ = try await start(context(endpoint, clientID: nil))
            XCTFail("expected a usage error")
        } catch let e as ProfirestUsageError {
            XCTAssertTrue(e.message.contains("clientID"), e.message)
        }
        XCTAssertTrue(endpoint.allForms.isEmpty)
    }

    func testDescriptionsNeverShowTheDeviceCode() async throws {
        let pairing = try await start(context(endpoint([])))
        var dumped = ""
        dump(pairing.state, to: &dumped)
        for text in [String(describing: pairing.state), String(reflecting: pairing.state), dumped] {
            XCTAssertFalse(text.contains("dc_secret_device_code"), text)
            XCTAssertTrue(text.contains("KXCB-TQPW"), text)
        }
    }
}

final class SleepLog: @unchecked Sendable {
    // @unchecked: `values` is only touched while `lock` is held.
    private let lock = NSLock()
    private var values: [TimeInterval] = []
    func record(_ value: TimeInterval) {
        lock.lock()
        values.append(value)
        lock.unlock()
    }
    var all: [TimeInterval] {
        lock.lock()
        defer { lock.unlock() }
        return values
    }
}

final class PairingConcurrencyTests: XCTestCase {
    func testConcurrentPollsSendOneRequestPerInterval() async throws {
        let clock = VirtualClock()
        let endpoint = ScriptedEndpoint([.oauth("authorization_pending")])
        endpoint.deviceAnswer = DeviceAuthorization(
            deviceCode: "dc", userCode: "KXCB-TQPW", verificationUri: "https://admin.example/z",
            expiresIn: 600, interval: 5, verificationUriComplete: "https://admin.example/z?code=KXCB-TQPW")
        let context = identityCore(
            store: StateStore(storage: MemoryTokenStorage(), key: "k"), endpoint: endpoint, clientID: "profirest-kds",
            clock: clock.function)
        let pairing = try await Pairing.start(
            scope: "a", deviceName: nil, devicePlatform: nil, appVersion: nil, core: context)
        clock.advance(5)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 { group.addTask { try await pairing.poll() } }
            for try await connected in group { XCTAssertFalse(connected) }
        }
        XCTAssertEqual(endpoint.allForms.filter { $0["grant_type"] != nil }.count, 1)
    }
}
