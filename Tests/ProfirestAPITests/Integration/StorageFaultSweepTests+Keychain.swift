#if os(Linux)
import AppleShims
import Foundation
import PlatformShims
import ProfirestAPI
import ProfirestTestSupport
import XCTest

// ShimKeychainStorage: Sources/ProfirestRefreshProbe/ShimKeychainStorage.swift, linked into this target.
extension StorageFaultSweepTests {
    /// A keychain shared with an app's extensions (`appGroup:`), the superset of a plain keychain's life (the same
    /// reads, writes and removals, plus a lock file that can fail): each read, write, removal and lock fails in turn.
    /// The keychain itself refuses a call with its real status — a locked device on reads and deletes, an I/O error
    /// on writes — so the storage's own `StorageError` comes out (not errSecMissingEntitlement: a storage without an
    /// access group answers it by moving to the file-based keychain, which on iOS is the same one). The lock fails
    /// the way the group's lock file fails — it cannot be opened (a directory stands in its place for that one call).
    func testEveryOperationOfAnAppGroupKeychainFailedInTurn() async throws {
        InMemoryKeychain.shared.reset()
        AppGroupContainers.shared.reset()
        AppGroupContainers.shared.root = URL(fileURLWithPath: directory.file("groups"))
        defer {
            InMemoryKeychain.shared.reset()
            AppGroupContainers.shared.reset()
        }
        let group = "group.cz.profirest.sweep"
        let statuses: [FaultyStorage.Operation: OSStatus] = [
            .read: errSecInteractionNotAllowed, .write: errSecIO, .remove: errSecInteractionNotAllowed,
        ]
        try await sweep("keychain in an app group") { run, plan in
            let service = "cz.profirest.sweep.group.\(run)"
            let storage = UnopenableLockFile(
                ShimKeychainStorage(service: service, appGroup: group),
                lockFile: directory.file("groups/\(group)/ProfirestAPI-\(service).lock"))
            return FaultyLockingStorage(storage, plan: plan, injection: { operation in
                if operation == .lock {
                    storage.failNextLock()
                } else {
                    InMemoryKeychain.shared.failNext(with: statuses[operation] ?? errSecNotAvailable)
                }
            })
        }
    }
}

/// A group keychain storage whose next lock finds a directory where its lock file should be (open fails: EISDIR),
/// then finds the file again.
private final class UnopenableLockFile: ProfirestAPI.LockingTokenStorage, @unchecked Sendable {
    // @unchecked: `armed` is behind its lock; the wrapped storage is thread-safe.
    private let inner: ShimKeychainStorage
    private let lockFile: String
    private let armed = ProfirestAPI.Locked(false)

    init(_ inner: ShimKeychainStorage, lockFile: String) {
        self.inner = inner
        self.lockFile = lockFile
    }

    func failNextLock() { armed.withLock { $0 = true } }

    func get(_ key: String) throws -> String? { try inner.get(key) }
    func set(_ key: String, _ value: String) throws { try inner.set(key, value) }
    func remove(_ key: String) throws { try inner.remove(key) }

    func withLock<T>(_ key: String, _ body: () throws -> T) throws -> T {
        guard takeArmed() else { return try inner.withLock(key, body) }
        try blockLockFile()
        defer { unblockLockFile() }
        let result = try inner.withLock(key, body)
        XCTFail("the group's lock was taken with a directory in its file's place")
        return result
    }

    func withAsyncLock<T: Sendable>(_ key: String, _ body: @Sendable () async throws -> T) async throws -> T {
        guard takeArmed() else { return try await inner.withAsyncLock(key, body) }
        try blockLockFile()
        defer { unblockLockFile() }
        let result = try await inner.withAsyncLock(key, body)
        XCTFail("the group's lock was taken with a directory in its file's place")
        return result
    }

    /// Whether this call is the one to fail, disarming it.
    private func takeArmed() -> Bool {
        armed.withLock { armed in
            defer { armed = false }
            return armed
        }
    }

    private func blockLockFile() throws {
        try? FileManager.default.removeItem(atPath: lockFile)
        try FileManager.default.createDirectory(atPath: lockFile, withIntermediateDirectories: true)
    }

    private func unblockLockFile() { try? FileManager.default.removeItem(atPath: lockFile) }
}
#endif
