import XCTest
@testable import ProfirestAPI
import ProfirestTesting

final class TokenRefresherTests: XCTestCase {
    private let key = "profirest-api:profirest-pos"
    private let clock = VirtualClock()

    /// A store holding tokens that expire `expiresIn` seconds from the virtual now.
    private func pairedStore(
        _ storage: any TokenStorage = MemoryTokenStorage(), access: String = "at_old", expiresIn: TimeInterval = -10
    ) throws -> StateStore {
        let store = StateStore(storage: storage, key: key)
        let expiry = clock.now.addingTimeInterval(expiresIn)
        try store.update {
            $0.accessToken = access
            $0.refreshToken = "rt_old"
            $0.expiresAt = expiry
            $0.restaurantID = "11"
        }
        return store
    }

    /// A refresher over `endpoint`, as the identity asks it: with the core it sends through.
    private func refresher(
        _ store: StateStore, _ endpoint: ScriptedEndpoint, clientID: String? = "profirest-pos",
        onUnpaired: (@Sendable () -> Void)? = nil,
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = RealTime.sleep
    ) -> RefresherUnderTest {
        var lost: (@Sendable (Core) -> Void)?
        if let onUnpaired { lost = { _ in onUnpaired() } }
        return RefresherUnderTest(
            refresher: TokenRefresher(onUnpaired: lost),
            core: identityCore(store: store, endpoint: endpoint, clientID: clientID, clock: clock.function, sleep: sleep))
    }

    func testFreshTokenIsUsedWithoutARequest() async throws {
        let endpoint = ScriptedEndpoint()
        let auth = refresher(try pairedStore(expiresIn: 600), endpoint)
        let token = try await auth.accessToken()
        XCTAssertEqual(token, "at_old")
        XCTAssertEqual(endpoint.tokenCalls, 0)
    }

    func testTokenIsRenewedRefreshMarginBeforeExpiry() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_new", refresh: "rt_new"))])
        let store = try pairedStore(expiresIn: 61)
        let auth = refresher(store, endpoint)
        let first = try await auth.accessToken()
        XCTAssertEqual(first, "at_old")
        clock.advance(2)  // 59 s left: inside the 60 s margin
        let second = try await auth.accessToken()
        XCTAssertEqual(second, "at_new")
        XCTAssertEqual(endpoint.allForms.first, ["grant_type": "refresh_token", "refresh_token": "rt_old", "client_id": "profirest-pos"])
        XCTAssertEqual(try store.read().refreshToken, "rt_new")
        XCTAssertEqual(try store.read().expiresAt, clock.now.addingTimeInterval(1800))
    }

    func testThousandConcurrentCallersShareOneRefresh() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_new", refresh: "rt_new"))])
        let gate = Gate()
        endpoint.gate = gate
        let auth = refresher(try pairedStore(), endpoint)
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<1000 { group.addTask { try await auth.accessToken() } }
            // Every caller is queued on the single in-flight refresh before the server answers.
            _ = await eventually { endpoint.tokenCalls >= 1 }
            for _ in 0..<100 { await Task.yield() }
            gate.open()
            var all: [String] = []
            for try await token in group { all.append(token) }
            return all
        }
        XCTAssertEqual(tokens.count, 1000)
        XCTAssertEqual(Set(tokens), ["at_new"])
        XCTAssertEqual(endpoint.tokenCalls, 1)
    }

    func testRejectedStaleTokenReturnsTheNewerOneWithoutARequest() async throws {
        let endpoint = ScriptedEndpoint()
        let auth = refresher(try pairedStore(access: "at_current", expiresIn: 900), endpoint)
        let token = try await auth.refresh(afterRejecting: "at_previous")
        XCTAssertEqual(token, "at_current")
        XCTAssertEqual(endpoint.tokenCalls, 0)
    }

    func testRejectedCurrentTokenIsRefreshedEvenWhenNotExpired() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_new", refresh: "rt_new"))])
        let auth = refresher(try pairedStore(access: "at_current", expiresIn: 900), endpoint)
        let token = try await auth.refresh(afterRejecting: "at_current")
        XCTAssertEqual(token, "at_new")
        XCTAssertEqual(endpoint.tokenCalls, 1)
    }

    func testTwoProcessesOnOneFileRefreshOnce() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("tokens.json")
        let storeA = try pairedStore(FileTokenStorage(path: path))
        // The second "process": its own storage object, store and refresher, which already read the expired state.
        let storeB = StateStore(storage: FileTokenStorage(path: path), key: key)
        XCTAssertEqual(storeB.snapshot.accessToken, "at_old")
        let endpoint = ScriptedEndpoint([
            .tokens(.sample("at_new", refresh: "rt_new")), .oauth("invalid_grant"),  // a second use of rt_old would fail
        ])
        let a = refresher(storeA, endpoint)
        let b = refresher(storeB, endpoint)
        async let tokenA = a.accessToken()
        async let tokenB = b.accessToken()
        let (ta, tb) = try await (tokenA, tokenB)
        XCTAssertEqual(ta, "at_new")
        XCTAssertEqual(tb, "at_new")
        XCTAssertEqual(endpoint.tokenCalls, 1)
        XCTAssertEqual(try storeB.read().refreshToken, "rt_new")
    }

    func testInvalidGrantForgetsTokensAndCallsOnUnpairedOnce() async throws {
        let endpoint = ScriptedEndpoint([.oauth("invalid_grant")])
        let gate = Gate()
        endpoint.gate = gate
        let calls = Counter()
        let store = try pairedStore()
        let auth = refresher(store, endpoint, onUnpaired: { calls.increment() })
        let results = await withTaskGroup(of: Error?.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    do { _ = try await auth.accessToken(); return nil } catch { return error }
                }
            }
            _ = await eventually { endpoint.tokenCalls >= 1 }
            gate.open()
            var all: [Error?] = []
            for await result in group { all.append(result) }
            return all
        }
        XCTAssertEqual(results.count, 50)
        XCTAssertTrue(results.allSatisfy { ($0 as? AuthFailure) == .notPaired })
        XCTAssertEqual(calls.value, 1)
        XCTAssertFalse(try store.read().hasTokens)
        XCTAssertNil(try store.read().restaurantID)
        // Later requests fail at once, without another request or another callback.
        do {
            _ = try await auth.accessToken()
            XCTFail("expected not paired")
        } catch { XCTAssertEqual(error as? AuthFailure, .notPaired) }
        XCTAssertEqual(endpoint.tokenCalls, 1)
        XCTAssertEqual(calls.value, 1)
    }

    func testInvalidClientIsTemporaryAndKeepsTokens() async throws {
        for code in ["invalid_client", "unauthorized_client"] {
            let endpoint = ScriptedEndpoint([.oauth(code)])
            let calls = Counter()
            let store = try pairedStore()
            let auth = refresher(store, endpoint, onUnpaired: { calls.increment() })
            do {
                _ = try await auth.accessToken()
                XCTFail("expected \(code)")
            } catch let e as ProfirestOAuthError {
                XCTAssertEqual(e.error, code)
            }
            XCTAssertEqual(try store.read().refreshToken, "rt_old")
            XCTAssertEqual(calls.value, 0)
        }
    }

    func testNetworkFailureKeepsTokensAndPropagates() async throws {
        // Through the wire like every scripted answer: the transport's URLError is the catalog's network_error, sent
        // again after 1 s and 2 s (`SendPolicy.tokenRequest`), then thrown.
        let endpoint = ScriptedEndpoint([.failure(URLError(.notConnectedToInternet))])
        let store = try pairedStore()
        let auth = refresher(store, endpoint, sleep: { _ in })
        do {
            _ = try await auth.accessToken()
            XCTFail("expected a network error")
        } catch let e as ProfirestAPIError {
            XCTAssertEqual(e.code, ErrorCode.networkError)
        }
        XCTAssertEqual(endpoint.tokenCalls, 3)
        XCTAssertEqual(try store.read().accessToken, "at_old")
    }

    func testALostRefreshAnswerIsSentAgainAfterAShortWait() async throws {
        let lost = ErrorFactory(language: "en", redaction: Redaction(secrets: [])).make(ErrorCode.networkError, detail: "connection lost")
        let endpoint = ScriptedEndpoint([.failure(lost), .failure(lost), .tokens(.sample("at_new", refresh: "rt_new"))])
        let store = try pairedStore()
        let waits = WaitRecorder()
        let auth = refresher(store, endpoint, sleep: { await waits.record($0) })
        let token = try await auth.accessToken()
        XCTAssertEqual(token, "at_new")
        XCTAssertEqual(endpoint.tokenCalls, 3)
        XCTAssertEqual(endpoint.allForms.map { $0["refresh_token"] }, ["rt_old", "rt_old", "rt_old"], "the same token each time")
        let recorded = await waits.values
        XCTAssertEqual(recorded, [1, 2])
        XCTAssertEqual(try store.read().refreshToken, "rt_new")
    }

    func testRefreshRetriesAreBounded() async throws {
        let lost = ErrorFactory(language: "en", redaction: Redaction(secrets: [])).make(ErrorCode.serviceUnavailable, status: 503, detail: nil)
        let endpoint = ScriptedEndpoint([.failure(lost), .failure(lost), .failure(lost)])
        let store = try pairedStore()
        let auth = refresher(store, endpoint, sleep: { _ in })
        do {
            _ = try await auth.accessToken()
            XCTFail("expected the 503")
        } catch let e as ProfirestAPIError {
            XCTAssertEqual(e.code, ErrorCode.serviceUnavailable)
        }
        XCTAssertEqual(endpoint.tokenCalls, 3)
        XCTAssertEqual(try store.read().accessToken, "at_old", "the tokens are kept")
    }

    func testUnpairDuringRefreshDiscardsTheResult() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_new", refresh: "rt_new"))])
        let gate = Gate()
        endpoint.gate = gate
        let store = try pairedStore()
        let auth = refresher(store, endpoint)
        let before = store.generation
        let refresh = Task { try await auth.accessToken() }
        let called = await eventually { endpoint.tokenCalls == 1 }
        XCTAssertTrue(called)
        let unpair = Task { try await auth.unpair(revoke: false) }
        let bumped = await eventually { store.generation != before }
        XCTAssertTrue(bumped)
        gate.open()
        do {
            _ = try await refresh.value
            XCTFail("the stale refresh must not hand out its token")
        } catch { XCTAssertEqual(error as? AuthFailure, .notPaired) }
        _ = try await unpair.value
        let state = try store.read()
        XCTAssertNil(state.accessToken)
        XCTAssertNil(state.refreshToken)
        XCTAssertFalse(try XCTUnwrap(store.storage.get(key) ?? "").contains("at_new"))
    }

    func testNewPairingDuringRefreshWins() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_from_refresh", refresh: "rt_from_refresh"))])
        let gate = Gate()
        endpoint.gate = gate
        let store = try pairedStore()
        let auth = refresher(store, endpoint)
        let refresh = Task { try await auth.accessToken() }
        let called = await eventually { endpoint.tokenCalls == 1 }
        XCTAssertTrue(called)
        // A pairing completes meanwhile: it waits for the lock, then stores its tokens and a new generation.
        let now = clock.now
        let before = store.generation
        let pairing = Task {
            try await store.replaceConnection { $0.apply(.sample("at_paired", refresh: "rt_paired"), requestedScope: nil, now: now) }
        }
        gate.open()
        let token = try await refresh.value
        try await pairing.value
        XCTAssertNotEqual(store.generation, before)
        // The refresh finished first (the pairing waited for the lock), so its token was valid when handed out;
        // but it never overwrites the pairing, and from now on the pairing's token is used.
        XCTAssertTrue(["at_from_refresh", "at_paired"].contains(token), token)
        XCTAssertEqual(try store.read().refreshToken, "rt_paired")
        let next = try await auth.accessToken()
        XCTAssertEqual(next, "at_paired")
    }

    func testAnswerWithoutRefreshTokenKeepsTheOldOne() async throws {
        let endpoint = ScriptedEndpoint([.tokens(.sample("at_new", refresh: nil))])
        let store = try pairedStore()
        let auth = refresher(store, endpoint)
        let token = try await auth.accessToken()
        XCTAssertEqual(token, "at_new")
        XCTAssertEqual(try store.read().refreshToken, "rt_old")
    }

    func testStormGuardStopsAfterFiveRefreshesPerMinute() async throws {
        var script: [ScriptedEndpoint.Answer] = []
        for i in 1...10 { script.append(.tokens(.sample("at_\(i)", refresh: "rt_\(i)"))) }
        let endpoint = ScriptedEndpoint(script)
        let auth = refresher(try pairedStore(access: "at_0", expiresIn: 900), endpoint)
        var rejected = "at_0"
        for _ in 0..<5 { rejected = try await auth.refresh(afterRejecting: rejected) ?? "" }
        XCTAssertEqual(rejected, "at_5")
        do {
            _ = try await auth.refresh(afterRejecting: rejected)
            XCTFail("expected the storm guard")
        } catch let e as AuthFailure {
            guard case .refreshLimit(let count, let window, let retryAfter) = e else { return XCTFail("\(e)") }
            XCTAssertEqual(count, 5)
            XCTAssertEqual(window, 60)
            XCTAssertEqual(retryAfter, 60)
            XCTAssertTrue(e.description.contains("60 s"))
        }
        XCTAssertEqual(endpoint.tokenCalls, 5)
        clock.advance(61)
        let next = try await auth.refresh(afterRejecting: rejected)
        XCTAssertEqual(next, "at_6")
    }

    func testFixedTokenIsNeverRefreshed() async throws {
        let endpoint = ScriptedEndpoint()
        // The rule is the identity's: a fixed token goes as it is, and is never handed to the refresher.
        let auth = IdentityFixture(
            store: StateStore(storage: MemoryTokenStorage(), key: key), endpoint: endpoint, clientID: "profirest-pos",
            clock: clock.function, fixedAccessToken: "at_fixed")
        let token = try await auth.accessToken()
        XCTAssertEqual(token, "at_fixed")
        let retry = try await auth.refresh(afterRejecting: "at_fixed")
        XCTAssertNil(retry)
        XCTAssertEqual(endpoint.tokenCalls, 0)
    }

    func testStoredTokensWithoutClientIDAreAUsageError() async throws {
        let endpoint = ScriptedEndpoint()
        let auth = refresher(try pairedStore(), endpoint, clientID: nil)
        do {
            _ = try await auth.accessToken()
            XCTFail("expected a usage error")
        } catch let e as ProfirestUsageError {
            XCTAssertTrue(e.message.contains("clientID"), e.message)
        }
        XCTAssertEqual(endpoint.tokenCalls, 0)
    }

    func testNotPairedWithoutTokens() async throws {
        let auth = refresher(StateStore(storage: MemoryTokenStorage(), key: key), ScriptedEndpoint())
        do {
            _ = try await auth.accessToken()
            XCTFail("expected not paired")
        } catch { XCTAssertEqual(error as? AuthFailure, .notPaired) }
    }

    func testUnpairParksTheRefreshTokenForRevocationAndKeepsCursors() async throws {
        let endpoint = ScriptedEndpoint()
        let store = try pairedStore()
        try store.update { $0.eventsCursor["events_cursor:11"] = "c9" }
        let auth = refresher(store, endpoint)
        let parked = try await auth.unpair()
        XCTAssertEqual(parked, "rt_old")
        XCTAssertTrue(endpoint.revoked.isEmpty, "the revocation is Identity's, after the local state is cleared")
        let state = try store.read()
        XCTAssertFalse(state.hasTokens)
        XCTAssertEqual(state.pendingRevocations, ["rt_old"])
        XCTAssertEqual(state.eventsCursor, ["events_cursor:11": "c9"])
    }

    func testFailuresNeverContainTokens() {
        let texts = [
            AuthFailure.notPaired.description,
            AuthFailure.refreshLimit(count: 5, window: 60, retryAfter: 3).description,
            ProfirestOAuthError(error: "invalid_grant").description,
        ]
        for text in texts {
            XCTAssertFalse(text.contains("at_old") || text.contains("rt_old"), text)
        }
    }
}

/// A `TokenRefresher` with the core it sends through, asked the way `Identity` asks it (without its mapping of
/// failures to request errors, which the wiring tests cover).
struct RefresherUnderTest {
    let refresher: TokenRefresher
    let core: Core

    func accessToken() async throws -> String { try await refresher.accessToken(core: core) }
    func refresh(afterRejecting token: String) async throws -> String? {
        try await refresher.refresh(afterRejecting: token, core: core)
    }
    @discardableResult
    func unpair(revoke: Bool = true) async throws -> String? { try await refresher.unpair(revoke: revoke, core: core) }
}

final class Counter: @unchecked Sendable {
    // @unchecked: `count` is only touched while `lock` is held.
    private let lock = NSLock()
    private var count = 0
    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

/// Records the waits a refresher asks for, without waiting.
private actor WaitRecorder {
    private(set) var values: [TimeInterval] = []
    func record(_ seconds: TimeInterval) { values.append(seconds) }
}
