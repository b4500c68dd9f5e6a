import Foundation
import XCTest
@testable import ProfirestAPI

/// The observer over a whole flow against the sandbox — requests, a retry, a refresh, a staff session, the outbox,
/// unpairing — records everything, and none of it carries a secret the sandbox issued.
final class ObserverIntegrationTests: XCTestCase {
    private var sandbox: SandboxServer!

    override func setUp() async throws { sandbox = try SandboxServer.start() }
    override func tearDown() { sandbox?.stop() }

    func testAWholeFlowIsObservedAndNoSecretReachesTheObserver() async throws {
        let storage = MemoryTokenStorage()
        let clientID = "profirest-dochazka"
        _ = try await sandbox.pairDevice(clientID: clientID, storage: storage)
        let events = Locked([ProfirestEvent]())
        let api = ProfirestApi(options: .init(
            baseURL: sandbox.api, clientID: clientID, language: "en", storage: storage, retries: 2, retryDelay: 0.01,
            observer: { event in events.withLock { $0.append(event) } }))
        var secrets: Set<String> = []
        func collectTokens() throws {
            guard let text = try storage.get(StateStore.defaultKey(clientID: clientID)) else { return }
            let state = try StoredState.decode(text, location: "test")
            for token in [state.accessToken, state.refreshToken].compactMap({ $0 }) { secrets.insert(token) }
        }
        try collectTokens()

        _ = try await api.connection()
        _ = try await sandbox.admin("POST", "faults", ["action": "status", "status": 503, "path": "/v2/connection", "count": 1])
        _ = try await api.connection()
        _ = try await sandbox.admin("POST", "tokens/expire", [:])
        _ = try await api.connection()
        try collectTokens()
        let session = try await api.signInStaff(restaurantID: "11", credential: StaffCredential(method: "pin", secret: "1234"))
        secrets.insert(session.token)
        let outbox = try api.outbox(path: FileManager.default.temporaryDirectory
            .appendingPathComponent("observer-\(UUID().uuidString).json").path)
        let punch = AttendancePunchCreate(
            id: ProfirestApi.uuid(), type: "clock_in", credential: StaffCredential(method: "pin", secret: "1234"))
        _ = try await outbox.punch(restaurantID: "11", punch)
        await api.signOutStaff()
        try collectTokens()
        await api.unpair()

        let seen = events.withLock { $0 }
        var text = ""
        for event in seen {
            text += "\(event)\n" + String(reflecting: event) + "\n"
            dump(event, to: &text)
        }
        XCTAssertGreaterThan(secrets.count, 3, "the access and refresh tokens before and after the refresh, the staff token")
        for secret in secrets { XCTAssertFalse(text.contains(secret), "a secret reached the observer") }
        XCTAssertFalse(text.contains("\"1234\""))

        XCTAssertTrue(seen.contains { if case .retryScheduled(let a, _, .backoff) = $0 { return a.path == "/v2/connection" } else { return false } })
        XCTAssertTrue(seen.contains { if case .attemptFinished(_, let r) = $0 { return r.status == 503 && r.errorCode == "service_unavailable" } else { return false } })
        XCTAssertTrue(seen.contains(.tokenRefreshed(byThisProcess: true)))
        XCTAssertTrue(seen.contains { if case .staffSignedIn = $0 { return true } else { return false } })
        XCTAssertTrue(seen.contains { if case .staffSessionEnded(_, false) = $0 { return true } else { return false } })
        XCTAssertTrue(seen.contains(.outbox(.enqueued(id: punch.id))))
        XCTAssertTrue(seen.contains(.outbox(.delivered(id: punch.id))))
        XCTAssertEqual(seen.last, .unpaired(reason: "requested"))
        let punchAttempt = seen.compactMap { event -> ProfirestEvent.Attempt? in
            if case .attemptStarted(let a) = event, a.path.hasSuffix("/punches/batch") { return a }
            return nil
        }.first
        XCTAssertNotNil(punchAttempt?.idempotencyKey, "a POST's attempts carry their key")
    }
}
