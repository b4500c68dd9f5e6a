import Foundation
import ProfirestTestSupport
import XCTest
@testable import ProfirestAPI
import ProfirestTesting

/// What the server issued is never lost to a storage that fails for a while, and an unreadable storage is never
/// taken for an empty one: refresh, pairing, consent and cursors against a full disk, a read-only one and a
/// keychain that cannot be read, with an authorization server whose refresh tokens are single-use.
final class UnsavedStateTests: XCTestCase {
    static let key = "profirest-api:profirest-pos"

    // MARK: A refresh whose write fails

    func testARefreshThatCannotBeStoredKeepsTheNewPairAndNeverPresentsTheSpentOne() async throws {
        let world = World()
        try world.storage.seed(access: "acc-1", refresh: "ref-1", expired: true)
        world.server.issue(access: "acc-1", refresh: "ref-1")
        world.storage.failing = [.write, .remove]

        // The request that needed the refresh still succeeds, with the new token.
        let answer: JSONValue = try await world.api.get("/restaurants/11")
        XCTAssertEqual(answer["ok"], true)
        XCTAssertEqual(world.server.lastBearer, "acc-2")
        // The storage still has the old document; the new pair lives in memory and is reported once.
        XCTAssertEqual(try world.storage.document()?["refresh_token"], "ref-1")
        XCTAssertEqual(world.api.storageError?.kind, .unwritable)
        XCTAssertTrue(world.api.isPaired)

        // Two more refreshes while the disk is still full: each presents the newest refresh token.
        world.clock.advance(3600)
        _ = try await world.api.get("/restaurants/11") as JSONValue
        world.clock.advance(3600)
        _ = try await world.api.get("/restaurants/11") as JSONValue
        XCTAssertEqual(world.server.presentedRefreshTokens, ["ref-1", "ref-2", "ref-3"])
        XCTAssertEqual(world.server.spentPresented, 0)
        XCTAssertEqual(world.events.notSaved, 1, "reported once per outage")

        // Space comes back: the next change writes the newest pair.
        world.storage.failing = []
        try await world.api.core.store.saveUnsaved()
        XCTAssertEqual(try world.storage.document()?["refresh_token"], "ref-4")
        XCTAssertNil(world.api.storageError)
        XCTAssertEqual(world.events.saved, 1)
        XCTAssertEqual(world.unpaired.withLock { $0.count }, 0)
    }

    func testUnsavedStateIsWrittenAgainByATimerUntilTheStorageTakesIt() async throws {
        let sleeps = GatedSleeps()
        let storage = FaultyStorage.flaky()
        try storage.seed(access: "acc-1", refresh: "ref-1", expired: false)
        let store = StateStore(storage: storage, key: Self.key, sleep: { try await sleeps.sleep($0) })
        storage.failing = [.write]
        await XCTAssertThrowsStorageError { try await store.saveCursor("c-9", restaurantID: nil, types: []) }
        XCTAssertEqual(store.snapshot.eventsCursor[StoredState.cursorKey(restaurantID: nil, types: [])], "c-9")
        // The timer tries after 1 s, 2 s, 4 s …; it fails while the disk is full.
        await sleeps.release(expecting: 1)
        await sleeps.release(expecting: 2)
        storage.failing = []
        await sleeps.release(expecting: 4)
        // The retry's write reaches the storage a moment before the store records it as saved: wait for both.
        let saved = await eventually { (try? storage.document()?["events_cursor"]) == "c-9" && store.problem == nil }
        XCTAssertTrue(saved)
        XCTAssertNil(store.problem)
    }

    // MARK: Pairing and consent on a failing disk

    func testAPairingWhoseTokensCannotBeStoredSaysSoAndCompletesWithoutANewCode() async throws {
        let world = World()
        world.storage.failing = [.write]
        let pairing = try await world.api.pair(scope: "attendance:punch")
        let error = await thrown(StorageError.self) { try await pairing.connected() }
        XCTAssertEqual(error?.kind, .unwritable)
        XCTAssertEqual(world.server.deviceCodeExchanges, 1)
        // Paired in this process: the tokens are used although not stored yet.
        XCTAssertTrue(world.api.isPaired)
        _ = try await world.api.get("/restaurants/11") as JSONValue
        XCTAssertEqual(world.server.lastBearer, "acc-1")

        // Still full: connected() says so again without spending the code again.
        await XCTAssertThrowsStorageError { try await pairing.connected() }
        world.storage.failing = []
        try await pairing.connected()
        XCTAssertEqual(world.server.deviceCodeExchanges, 1)
        XCTAssertEqual(try world.storage.document()?["refresh_token"], "ref-1")
        XCTAssertEqual(world.server.spentPresented, 0)
    }

    func testAConsentWhoseTokensCannotBeStoredCompletesAgainWithoutANewCode() async throws {
        let world = World()
        let url = try world.api.authorizationURL(redirectURI: "app://callback", scope: "orders:read")
        let state = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "state" }?.value
        world.storage.failing = [.write]
        let callback = ["code": "code-1", "state": state ?? "", "iss": "https://api.mujprofirest.cz"]
        await XCTAssertThrowsStorageError { _ = try await world.api.completeAuthorization(parameters: callback) }
        XCTAssertEqual(world.server.codeExchanges, 1)
        world.storage.failing = []
        _ = try await world.api.completeAuthorization(parameters: callback)
        XCTAssertEqual(world.server.codeExchanges, 1, "the code is single-use: it was not sent again")
        XCTAssertEqual(try world.storage.document()?["refresh_token"], "ref-1")
    }

    // MARK: An unreadable storage

    func testAnUnreadableStorageIsNotAnEmptyOne() async throws {
        let world = World()
        try world.storage.seed(access: "acc-1", refresh: "ref-1", expired: false)
        world.server.issue(access: "acc-1", refresh: "ref-1")
        world.storage.failing = [.read]
        world.readStatus.withLock { $0 = -25308 }  // errSecInteractionNotAllowed: a keychain locked at a background launch
        XCTAssertTrue(world.api.isPaired, "unknown is not unpaired")
        XCTAssertNotNil(world.api.storageError)
        await XCTAssertThrowsStorageError { _ = try await world.api.pair(scope: "attendance:punch") }
        XCTAssertThrowsError(try world.api.authorizationURL(redirectURI: "app://cb", scope: "orders:read")) {
            XCTAssertTrue($0 is StorageError, "\($0)")
        }
        await XCTAssertThrowsStorageError { _ = try await world.api.get("/restaurants/11") as JSONValue }
        await world.api.unpair()
        XCTAssertEqual(world.server.requests.count, 0, "nothing was sent while the state could not be read")
        XCTAssertEqual(try world.storage.document()?["refresh_token"], "ref-1")

        // Unlocked: read again on the next access, and everything works.
        world.storage.failing = []
        XCTAssertTrue(world.api.isPaired)
        XCTAssertNil(world.api.storageError)
        _ = try await world.api.get("/restaurants/11") as JSONValue
        XCTAssertEqual(world.server.lastBearer, "acc-1")
    }

    // MARK: Event cursors

    func testACursorThatCannotBeStoredIsKeptAndNoBatchIsHandedOutTwice() async throws {
        let world = World()
        try world.storage.seed(access: "acc-1", refresh: "ref-1", expired: false)
        world.server.issue(access: "acc-1", refresh: "ref-1")
        world.storage.failing = [.write]
        let seen = Locked<[String]>([])
        let errors = Locked<[String]>([])
        let task = world.api.watchEvents(EventWatcher.Options(
            restaurantID: "11", onEvents: { events in seen.withLock { $0 += events.map(\.id) } },
            onError: { error in errors.withLock { $0.append("\(error)") } }, stream: false, interval: 1))
        let done = await eventually { seen.withLock { $0.count } >= 4 }
        task.cancel()
        _ = await task.value
        XCTAssertTrue(done)
        let ids = seen.withLock { $0 }
        XCTAssertEqual(ids, Array(Set(ids)).sorted(), "each event once, in order: \(ids)")
        XCTAssertFalse(errors.withLock { $0 }.isEmpty, "onError heard that the cursor is not stored")
    }

    // MARK: invalid_grant looks again before forgetting

    func testInvalidGrantLooksAtTheStorageAgainBeforeForgetting() async throws {
        let world = World()
        try world.storage.seed(access: "acc-1", refresh: "ref-1", expired: true)
        // Another process refreshed meanwhile: the server has moved on to ref-2, which the storage gets while our
        // request is on its way (a storage without a cross-process lock).
        world.server.issue(access: "acc-2", refresh: "ref-2")
        world.server.beforeRefusing = {
            try? world.storage.seed(access: "acc-2", refresh: "ref-2", expired: true)
        }
        _ = try await world.api.get("/restaurants/11") as JSONValue
        XCTAssertEqual(world.unpaired.withLock { $0.count }, 0)
        XCTAssertEqual(world.server.presentedRefreshTokens, ["ref-1", "ref-2"])
        XCTAssertEqual(try world.storage.document()?["refresh_token"], "ref-3")
    }
}

// MARK: - Test doubles

/// Test storages: a memory storage that fails only on demand (`failing`) as a file storage does, reads as a keychain
/// refusing with `readStatus` when it is set, else as a failing disk.
extension FaultyStorage {
    static func flaky(readStatus: Locked<Int32> = Locked(0)) -> FaultyStorage {
        FaultyStorage(MemoryTokenStorage(), plan: .none) { operation in
            let status = readStatus.withLock { $0 }
            if operation == .read, status != 0 {
                throw StorageError(kind: .keychain, path: "keychain", reason: "the keychain refused (OSStatus \(status))")
            }
            throw FaultyStorage.realisticError(operation, path: "tokens.json")
        }
    }

    /// Stores a connection under the tests' key, past any fault.
    func seed(access: String, refresh: String, expired: Bool) throws {
        let expires = expired ? "2020-01-01T00:00:00Z" : "2099-01-01T00:00:00Z"
        try inner.set(UnsavedStateTests.key,
            #"{"version":1,"access_token":"\#(access)","refresh_token":"\#(refresh)","expires_at":"\#(expires)","restaurant_id":"11"}"#)
    }

    /// The stored document's string members, read past any fault.
    func document() throws -> [String: String]? {
        guard let text = try inner.get(UnsavedStateTests.key) else { return nil }
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
        return object.compactMapValues { $0 as? String }
    }
}

/// An authorization server and API whose refresh tokens, device codes and authorization codes work once.
final class SingleUseServer: @unchecked Sendable {
    private let lock = NSLock()
    private var access: String?
    private var refresh: String?
    private var spent: Set<String> = []
    private var counter = 0
    private(set) var presented: [String] = []
    private(set) var spentCount = 0
    private(set) var deviceExchanges = 0
    private(set) var codeExchangeCount = 0
    private(set) var bearer: String?
    private(set) var all: [String] = []
    var beforeRefusing: (@Sendable () -> Void)?

    var presentedRefreshTokens: [String] { lock.withLock { presented } }
    var spentPresented: Int { lock.withLock { spentCount } }
    var deviceCodeExchanges: Int { lock.withLock { deviceExchanges } }
    var codeExchanges: Int { lock.withLock { codeExchangeCount } }
    var lastBearer: String? { lock.withLock { bearer } }
    var requests: [String] { lock.withLock { all } }

    func issue(access: String, refresh: String) {
        lock.withLock {
            self.access = access
            self.refresh = refresh
            counter = Int(access.split(separator: "-").last ?? "0") ?? 0
        }
    }

    private func newPair() -> String {
        counter += 1
        if let refresh { spent.insert(refresh) }
        access = "acc-\(counter)"
        refresh = "ref-\(counter)"
        return #"{"access_token":"acc-\#(counter)","token_type":"Bearer","expires_in":1800,"scope":"attendance:punch","refresh_token":"ref-\#(counter)","restaurant_id":"11","device_id":"dev_1"}"#
    }

    func answer(_ request: HTTPRequest) -> ScriptedTransport.Reply {
        let json = { (status: Int, body: String) in
            ScriptedTransport.Reply.respond(APIResponse(status: status, headers: ["Content-Type": "application/json"], data: Data(body.utf8)))
        }
        let form = request.form
        var refuse: (@Sendable () -> Void)?
        let reply: ScriptedTransport.Reply = lock.withLock {
            all.append("\(request.method) \(request.url.path)")
            switch request.url.path {
            case "/oauth/device_authorization":
                return json(200, #"{"device_code":"dev-code-1","user_code":"KXCB-TQPW","verification_uri":"https://api.mujprofirest.cz/pair","verification_uri_complete":"https://api.mujprofirest.cz/pair?c=KXCB-TQPW","expires_in":600,"interval":5}"#)
            case "/.well-known/oauth-authorization-server":
                return json(200, #"{"issuer":"https://api.mujprofirest.cz","authorization_endpoint":"https://api.mujprofirest.cz/oauth/authorize","token_endpoint":"https://api.mujprofirest.cz/oauth/token","revocation_endpoint":"https://api.mujprofirest.cz/oauth/revoke","device_authorization_endpoint":"https://api.mujprofirest.cz/oauth/device_authorization","response_types_supported":["code"],"grant_types_supported":["refresh_token"],"code_challenge_methods_supported":["S256"],"authorization_response_iss_parameter_supported":true,"scopes_supported":["orders:read"]}"#)
            case "/oauth/token":
                switch form["grant_type"] {
                case "refresh_token":
                    let presentedToken = form["refresh_token"] ?? ""
                    presented.append(presentedToken)
                    guard presentedToken == refresh else {
                        if spent.contains(presentedToken) { spentCount += 1 }
                        refuse = beforeRefusing
                        return json(400, #"{"error":"invalid_grant"}"#)
                    }
                    return json(200, newPair())
                case "urn:ietf:params:oauth:grant-type:device_code":
                    deviceExchanges += 1
                    guard deviceExchanges == 1 else { return json(400, #"{"error":"invalid_grant"}"#) }
                    return json(200, newPair())
                case "authorization_code":
                    codeExchangeCount += 1
                    guard codeExchangeCount == 1 else { return json(400, #"{"error":"invalid_grant"}"#) }
                    return json(200, newPair())
                default:
                    return json(400, #"{"error":"unsupported_grant_type"}"#)
                }
            case "/oauth/revoke":
                return json(200, "{}")
            case "/v2/events":
                let cursor = Int(request.url.query?.components(separatedBy: "cursor=").dropFirst().first?
                    .components(separatedBy: "&").first ?? "") ?? 0
                let events = (cursor..<min(cursor + 2, 6)).map {
                    #"{"id":"evt_\#($0)","type":"order.created","restaurant_id":"11","occurred_at":"2026-01-01T00:00:00Z","data":{}}"#
                }
                let next = min(cursor + 2, 6)
                return json(200, #"{"data":[\#(events.joined(separator: ","))],"next_cursor":"\#(next)","has_more":false}"#)
            default:
                bearer = request.headers["Authorization"].map { String($0.dropFirst("Bearer ".count)) }
                guard bearer == access else {
                    return ScriptedTransport.Reply.respond(APIResponse(
                        status: 401, headers: ["Content-Type": "application/problem+json"],
                        data: Data(#"{"type":"about:blank","title":"Invalid token","status":401,"code":"invalid_token"}"#.utf8)))
                }
                if request.url.path == "/v2/connection" {
                    return json(200, #"{"client_id":"profirest-pos","kind":"partner","restaurant_id":null,"restaurants":[],"scopes":["orders:read"]}"#)
                }
                return json(200, #"{"ok":true}"#)
            }
        }
        refuse?()
        return reply
    }
}

/// Observer events counted.
final class StorageEvents: @unchecked Sendable {
    private let lock = NSLock()
    private var _notSaved = 0
    private var _saved = 0
    var notSaved: Int { lock.withLock { _notSaved } }
    var saved: Int { lock.withLock { _saved } }
    func take(_ event: ProfirestEvent) {
        lock.withLock {
            if case .stateNotSaved = event { _notSaved += 1 }
            if case .stateSaved = event { _saved += 1 }
        }
    }
}

/// A client on a flaky storage, a single-use server and a clock the test moves.
struct World {
    let readStatus = Locked<Int32>(0)
    let storage: FaultyStorage
    let server = SingleUseServer()
    let clock = VirtualClock(start: Date(timeIntervalSince1970: 1_790_000_000))
    let events = StorageEvents()
    let unpaired = Locked<[String]>([])
    let api: ProfirestApi

    init() {
        storage = .flaky(readStatus: readStatus)
        let (server, clock, events, unpaired) = (self.server, self.clock, self.events, self.unpaired)
        let transport = ScriptedTransport { request in server.answer(request) }
        api = ProfirestApi(options: .init(
            clientID: "profirest-pos", storage: storage, retries: 0,
            onUnpaired: { error in unpaired.withLock { $0.append(error.code) } },
            transport: transport, clock: { clock.now }, sleep: { seconds in
                clock.advance(seconds)
                await Task.yield()
            },
            observer: { events.take($0) }))
    }
}

/// Sleeps that end only when the test releases them, in order, checking how long each asked for.
actor GatedSleeps {
    private var waiting: [(TimeInterval, CheckedContinuation<Void, Never>)] = []

    nonisolated func sleep(_ seconds: TimeInterval) async throws {
        await withCheckedContinuation { continuation in
            Task { await self.park(seconds, continuation) }
        }
    }

    private func park(_ seconds: TimeInterval, _ continuation: CheckedContinuation<Void, Never>) {
        waiting.append((seconds, continuation))
    }

    func release(expecting seconds: TimeInterval, file: StaticString = #filePath, line: UInt = #line) async {
        for _ in 0..<100_000 where waiting.isEmpty { await Task.yield() }
        guard !waiting.isEmpty else { return XCTFail("no sleep to release", file: file, line: line) }
        let (asked, continuation) = waiting.removeFirst()
        XCTAssertEqual(asked, seconds, file: file, line: line)
        continuation.resume()
    }
}

func XCTAssertThrowsStorageError(
    _ body: () async throws -> Void, file: StaticString = #filePath, line: UInt = #line
) async {
    _ = await thrown(StorageError.self, body, file: file, line: line)
}
