// The storage part of make soak: one device's life on a token file whose every operation fails with 1 % probability
// (FaultyLockingStorage: EIO reads, ENOSPC writes, EROFS removes, ENOLCK locks), against a strict sandbox (a refresh
// token used twice is invalid_grant): requests, a refresh every 13 s, event cursor saves, and every so often a
// restart — a new client on the same file, the fault paused while it proves that what was stored still works.
//
//   storage_faults_injected      operations failed (the part runs until `--storage-faults`, 1,000, were)
//   storage_fault_operations     operations made, failed ones included
//   storage_fault_unpairings     onUnpaired calls and not_paired / invalid_grant answers: a pairing lost to a fault
//   storage_fault_spent_refresh_tokens   refresh tokens the server had replaced, presented again (its refresh_reuse)
//   storage_fault_lost           restarts whose stored tokens the server refused, and events delivered again after a
//                                restart (a cursor write lost)
//   storage_fault_unclear_errors errors of a faulted call that were not a StorageError
//   storage_fault_restarts       restarts checked
import Foundation
import ProfirestAPI
import ProfirestTestSupport

func soakStorageFaults(_ sandbox: Sandbox, faults target: Int, directory: URL) async throws -> [String: Any] {
    let clientID = "profirest-kds"
    let file = FileTokenStorage(path: directory.appendingPathComponent("storage-fault-tokens.json").path)
    try await sandbox.admin("DELETE", "faults")
    try await sandbox.admin("POST", "config", ["refresh_grace": 0])
    try await sandbox.pairDevice(clientID: clientID, storage: file)
    let storage = FaultyLockingStorage(file, plan: .random(probability: 0.01, seed: 28))
    let unpairings = Counter()
    let lost = Counter()
    let unclear = Counter()
    let delivered = LockedIDs()
    let reuseBefore = try await sandbox.refreshReuse()
    func client(on storage: any TokenStorage) -> ProfirestApi {
        ProfirestApi(options: .init(
            baseURL: sandbox.api, clientID: clientID, language: "en", storage: storage, retryDelay: 0.05, timeout: 5,
            onUnpaired: { _ in unpairings.add() }))
    }
    func judged(_ body: () async throws -> Void) async {
        do { try await body() } catch is StorageError {
        } catch let e as ProfirestAPIError where e.code == "not_paired" || e.code == "invalid_grant" {
            unpairings.add()
        } catch {
            if unclear.value < 5 { FileHandle.standardError.write(Data("storage faults: not a StorageError: \(error)\n".utf8)) }
            unclear.add()
        }
    }
    func watcher(_ api: ProfirestApi, into ids: LockedIDs) -> EventWatcher {
        api.eventWatcher(.init(restaurantID: "11", onEvents: { events in ids.insert(events.map(\.id)) }, stream: false))
    }
    var api = client(on: storage)
    var round = 0
    var restarts = 0
    let deadline = Date().addingTimeInterval(900)
    // The server ends the access token every 13 s: a refresh each time, fewer than the storm guard's 5 a minute.
    var expired = Date()
    while storage.injected < target, Date() < deadline {
        round += 1
        if Date().timeIntervalSince(expired) >= 13 {
            try await sandbox.admin("POST", "tokens/expire", ["client_id": clientID])
            expired = Date()
        }
        await judged { _ = try await api.connection() }
        if round % 3 == 0 {
            try await sandbox.admin("POST", "events", ["count": 1, "restaurant_id": "11"])
            await judged { try await watcher(api, into: delivered).once() }
        }
        if round % 50 == 0 {
            // A restart: the old client gets one fault-free call to write what it keeps, then a new process on the
            // file alone must continue — the latest refresh token, the latest cursor.
            restarts += 1
            storage.isPaused = true
            _ = try? await api.connection()
            try await sandbox.admin("POST", "tokens/expire", ["client_id": clientID])
            let fresh = client(on: file)
            do { _ = try await fresh.connection() } catch { lost.add() }
            let again = LockedIDs()
            try? await watcher(fresh, into: again).once()
            if !again.all.isDisjoint(with: delivered.all) { lost.add() }
            storage.isPaused = false
            api = client(on: storage)
        }
    }
    let reuse = try await sandbox.refreshReuse() - reuseBefore
    try await sandbox.admin("POST", "config", ["refresh_grace": 60])
    return [
        "storage_faults_injected": storage.injected,
        "storage_fault_operations": storage.counts.values.reduce(0, +),
        "storage_fault_unpairings": unpairings.value,
        "storage_fault_spent_refresh_tokens": reuse,
        "storage_fault_lost": lost.value,
        "storage_fault_unclear_errors": unclear.value,
        "storage_fault_restarts": restarts,
        "storage_fault_rounds": round,
    ]
}

/// Event ids seen, from the feed's handler.
final class LockedIDs: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: Set<String> = []
    func insert(_ more: [String]) { lock.lock(); ids.formUnion(more); lock.unlock() }
    var all: Set<String> { lock.lock(); defer { lock.unlock() }; return ids }
}
