import Foundation
import XCTest
import ProfirestTestSupport
@testable import ProfirestAPI

/// Every storage operation of a client's life failed in turn (issue 28, item 5): a scripted life — pairing by device
/// code (RFC 8628), three refreshes, a staff sign-in, feed cursor saves, an outbox write, partner consent (code and
/// PKCE), unpairing — is run once per (kind, N) for every N up to the number of operations of that kind in a life, the
/// Nth failing with the error a real storage gives, against the sandbox with strict rotation (a refresh token used
/// twice is `invalid_grant` and counted in its stats). After each run: nobody was unpaired who did not ask, a fresh
/// process on the same storage continues with what was stored (the latest tokens, the latest cursor), no spent refresh
/// token reached the server, and each fault came out as a `StorageError`, never `invalid_grant` or `not_paired`.
///
/// Written against issue 28's promised behaviour (items 1–3: state the server issued is kept in memory and written
/// again, a read failure is never "not paired"): on 1015e88 the memory and file sweeps fail — a write fault at a
/// refresh unpairs the device (a spent refresh token presented), one at pairing or consent ends as `invalid_grant`, one
/// at `unpair()` leaves the device paired — and pass once StateStore keeps what the server issued. The keychain sweep
/// (StorageFaultSweepTests+Keychain.swift) likewise.
final class StorageFaultSweepTests: XCTestCase {
    private var sandbox: SandboxServer!
    var directory: TemporaryDirectory!

    override func setUp() async throws {
        sandbox = try SandboxServer.start()
        directory = try TemporaryDirectory()
        try await sandbox.config(["poll_interval": 1, "refresh_grace": 0])
    }

    override func tearDown() {
        sandbox?.stop()
        directory?.remove()
    }

    func testEveryOperationOfAMemoryStorageFailedInTurn() async throws {
        try await sweep("memory") { _, plan in FaultyLockingStorage(MemoryTokenStorage(), plan: plan) }
    }

    func testEveryOperationOfAFileStorageFailedInTurn() async throws {
        try await sweep("file") { run, plan in
            FaultyLockingStorage(FileTokenStorage(path: self.directory.file("tokens-\(run).json")), plan: plan)
        }
    }

    /// Counts a fault-free life's operations, then runs the life once per (kind, N); fails with every broken
    /// invariant of every run, grouped.
    func sweep(_ name: String, _ makeStorage: (Int, FaultyStorage.Plan) -> FaultyStorage) async throws {
        var run = 0
        let counting = makeStorage(run, .none)
        let clean = await live(counting, run: run)
        XCTAssertEqual(clean.violations, [], "the fault-free life of \(name)")
        let counts = counting.counts
        XCTAssertGreaterThan(counts[.read] ?? 0, 5)
        XCTAssertGreaterThan(counts[.write] ?? 0, 5)
        var failures: [String] = []
        var surfaced = 0
        for kind in FaultyStorage.Operation.allCases {
            for n in stride(from: 1, through: counts[kind] ?? 0, by: 1) {
                run += 1
                let storage = makeStorage(run, .nth(kind, n))
                let report = await live(storage, run: run)
                surfaced += report.surfaced
                failures += report.violations.map { "\(name) \(kind) #\(n): \($0)" }
            }
        }
        print("storage fault sweep \(name): operations \(counts.map { "\($0.key)=\($0.value)" }.sorted()), runs \(run), "
              + "faults surfaced as StorageError \(surfaced), broken invariants \(failures.count)")
        XCTAssertEqual(failures, [], "\(failures.count) broken invariants")
        let stats = try await sandbox.admin("GET", "stats")
        XCTAssertEqual(stats["refresh_reuse"]?.intValue ?? 0, 0, "spent refresh tokens presented")
        XCTAssertEqual(stats["refresh_replays"]?.intValue ?? 0, 0, "strict rotation: no replays either")
    }

    struct Report {
        var violations: [String] = []
        var surfaced = 0
    }

    /// One scripted life on `storage`; what it broke.
    private func live(_ storage: FaultyStorage, run: Int) async -> Report {
        var report = Report()
        let unpairings = Locked(0)
        let key = "sweep-\(run)"
        let api = sandbox.client(clientID: "profirest-dochazka", storage: storage, storageKey: key) { _ in
            unpairings.withLock { $0 += 1 }
        }
        let reuseBefore = (try? await sandbox.admin("GET", "stats")["refresh_reuse"]?.intValue) ?? 0

        /// Runs `body`; a failure must be a storage error (the fault), after which `body` (or `again`) must succeed.
        func step<T>(_ name: String, _ body: () async throws -> T, again: (() async throws -> T)? = nil) async -> T? {
            do { return try await body() } catch {
                if let problem = Self.unclear(error) { report.violations.append("\(name): \(problem)") }
                report.surfaced += 1
            }
            do {
                if let again { return try await again() }
                return try await body()
            } catch {
                report.violations.append("\(name) failed again after the fault: \(Self.describe(error))")
                return nil
            }
        }
        func checkPaired(_ when: String) {
            storage.isPaused = true
            if !api.isPaired { report.violations.append("not paired \(when)") }
            storage.isPaused = false
        }

        // Pairing (RFC 8628): a resumed pairing polls at once; after a storage fault, connected() finishes it.
        guard let pairing = await step("pair", {
            try await api.pair(
                scope: "restaurants:read staff:read staff:authenticate attendance:read attendance:punch events:read customers:write",
                deviceName: "Sweep \(run)")
        }) else { return report }
        do { try await sandbox.admin("POST", "pairings/\(pairing.userCode)/approve", ["restaurant_id": "11"]) } catch {
            report.violations.append("approve: \(error)")
            return report
        }
        let resumed: Pairing
        do { resumed = try api.resumePairing(pairing.state) } catch {
            report.violations.append("resumePairing: \(Self.describe(error))")
            return report
        }
        let connected = await step("connect", { () -> Bool in
            if try await resumed.poll() { return true }
            try await resumed.connected()
            return true
        }, again: { try await resumed.connected(); return true })
        guard connected == true else { return report }
        checkPaired("after pairing")
        storage.isPaused = true
        let deviceID = api.deviceID ?? ""
        storage.isPaused = false

        for i in 1...3 {
            _ = try? await sandbox.admin("POST", "tokens/expire", ["device_id": .string(deviceID)])
            _ = await step("refresh \(i)", { try await api.connection() })
            checkPaired("after refresh \(i)")
        }
        _ = await step("staff sign-in", {
            try await api.signInStaff(restaurantID: "11", credential: StaffCredential(method: "pin", secret: "1234"))
        })

        let delivered = Locked<Set<String>>([])
        let watcher = api.eventWatcher(.init(restaurantID: "11", onEvents: { events in
            delivered.withLock { $0.formUnion(events.map(\.id)) }
        }, stream: false))
        _ = await step("first cursor save", { try await watcher.once() })
        _ = try? await sandbox.admin("POST", "events", ["count": 2, "restaurant_id": "11"])
        _ = await step("cursor save", { try await watcher.once() })

        let outboxPath = directory.file("outbox-\(run).json")
        if let outbox = await step("outbox", { try api.outbox(path: outboxPath) }) {
            // A write refused for a storage fault may be in the journal already: the retry is a flush, not a second
            // write (its Idempotency-Key would make a second one harmless, but not a second journal entry).
            _ = await step("outbox enqueue", {
                _ = try await outbox.post(
                    "/customers", body: ["name": JSONValue.string("Sweep \(run)")], idempotencyKey: "sweep-\(run)")
            }, again: {
                _ = await outbox.flush()
            })
            let status = await outbox.flush()
            if status.count > 0 {
                report.violations.append("outbox: \(status.count) writes not settled (\(status.lastFailure.map { "\($0)" } ?? "no failure"))")
            }
        }

        // Partner consent (code + PKCE) on the same storage, under the partner's own key.
        let partner = sandbox.client(clientID: "moje-aplikace", storage: storage, storageKey: key + "-partner") { _ in
            unpairings.withLock { $0 += 1 }
        }
        _ = try? await sandbox.admin("POST", "consents/auto", ["decision": "approve", "restaurant_ids": ["11"]])
        if let url = await step("authorization URL", {
            try partner.authorizationURL(redirectURI: "mojeaplikace://profirest", scope: "restaurants:read orders:read")
        }), let callback = try? await followConsent(url) {
            _ = await step("consent", { try await partner.completeAuthorization(callback) })
            _ = await step("partner call", { try await partner.connection() })
        }

        // A fresh process on what was stored, faults paused: the latest refresh token (the sandbox refuses a spent
        // one), the latest cursor (no event delivered twice).
        storage.isPaused = true
        _ = try? await api.connection()
        _ = try? await partner.connection()
        _ = try? await sandbox.admin("POST", "tokens/expire", ["device_id": .string(deviceID)])
        let fresh = sandbox.client(clientID: "profirest-dochazka", storage: storage.inner, storageKey: key) { _ in
            unpairings.withLock { $0 += 1 }
        }
        do { _ = try await fresh.connection() } catch {
            report.violations.append("a fresh process could not continue from the stored tokens: \(Self.describe(error))")
        }
        let again = Locked<Set<String>>([])
        do {
            try await fresh.eventWatcher(.init(restaurantID: "11", onEvents: { events in
                again.withLock { $0.formUnion(events.map(\.id)) }
            }, stream: false)).once()
        } catch {
            report.violations.append("a fresh process could not read the feed: \(Self.describe(error))")
        }
        let repeated = again.withLock { $0 }.intersection(delivered.withLock { $0 })
        if !repeated.isEmpty { report.violations.append("cursor lost: \(repeated.count) events delivered again") }
        storage.isPaused = false

        await api.unpair()
        await partner.unpair()
        storage.isPaused = true
        let refused = api.isPaired
        storage.isPaused = false
        if refused {
            // A storage that cannot be read or locked refuses unpair() rather than overwrite tokens it cannot see
            // (issue 28, item 3); once it answers again, unpair() forgets the connection.
            await api.unpair()
            storage.isPaused = true
            if api.isPaired { report.violations.append("still paired after unpair() with the storage answering") }
            storage.isPaused = false
        }
        let unasked = unpairings.withLock { $0 }
        if unasked > 0 { report.violations.append("\(unasked) unpairings nobody asked for") }
        let reuseAfter = (try? await sandbox.admin("GET", "stats")["refresh_reuse"]?.intValue) ?? 0
        if reuseAfter > reuseBefore { report.violations.append("\(reuseAfter - reuseBefore) spent refresh tokens presented") }
        return report
    }

    /// Nil for a clear storage error; else what is wrong with it.
    static func unclear(_ error: any Error) -> String? {
        switch error {
        case is StorageError: return nil
        case let e as ProfirestAPIError:
            if e.code == "not_paired" || e.code == "invalid_grant" { return "the fault came out as \(e.code)" }
            return e.underlyingError is StorageError ? nil : "not a storage error: \(e.description)"
        case let e as ProfirestOAuthError: return "the fault came out as OAuth \(e.error)"
        default: return "not a storage error: \(describe(error))"
        }
    }

    static func describe(_ error: any Error) -> String {
        if let e = error as? ProfirestOAuthError { return "OAuth \(e.error)" }
        return String(describing: error)
    }

    private func followConsent(_ url: URL) async throws -> URL {
        let response = try await URLSessionTransport().send(HTTPRequest(method: "GET", url: url))
        guard let location = response.header("Location").flatMap(URL.init(string:)) else {
            throw ProfirestTestFailure("no redirect from the consent page")
        }
        return location
    }
}
