// Linux only, test-only: the keychain storage as the library's Apple builds have it — KeychainTokenStorage.swift
// compiled against the in-memory keychain (PlatformShims) — as a storage of the library, its lock and its errors
// carried over. Shared by the probe processes and the tests (Tests/ProfirestAPITests/Storage links this file).
#if os(Linux)
import PlatformShims
import ProfirestAPI

/// `PlatformShims.KeychainTokenStorage` as a `ProfirestAPI.LockingTokenStorage`: each call forwarded, a
/// `PlatformShims.StorageError` carried over kind for kind.
final class ShimKeychainStorage: ProfirestAPI.LockingTokenStorage, @unchecked Sendable {
    // @unchecked: the keychain storage is thread-safe (its own state is behind a lock).
    let keychain: PlatformShims.KeychainTokenStorage

    init(service: String, accessGroup: String? = nil, appGroup: String? = nil) {
        keychain = PlatformShims.KeychainTokenStorage(service: service, accessGroup: accessGroup, appGroup: appGroup)
    }

    func get(_ key: String) throws -> String? { try carried { try keychain.get(key) } }
    func set(_ key: String, _ value: String) throws { try carried { try keychain.set(key, value) } }
    func remove(_ key: String) throws { try carried { try keychain.remove(key) } }

    func withLock<T>(_ key: String, _ body: () throws -> T) throws -> T {
        // The body's own errors pass as they are; only the lock's are the shim module's.
        try carried { try keychain.withLock(key, body) }
    }

    func withAsyncLock<T: Sendable>(_ key: String, _ body: @Sendable () async throws -> T) async throws -> T {
        do { return try await keychain.withAsyncLock(key, body) } catch let e as PlatformShims.StorageError {
            throw Self.carried(e)
        }
    }

    private func carried<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as PlatformShims.StorageError { throw Self.carried(e) }
    }

    private static func carried(_ e: PlatformShims.StorageError) -> ProfirestAPI.StorageError {
        let kind: ProfirestAPI.StorageError.Kind =
            switch e.kind {
            case .corrupt: .corrupt
            case .unreadable: .unreadable
            case .unwritable: .unwritable
            case .lockFailed: .lockFailed
            case .reentrantLock: .reentrantLock
            case .keychain: .keychain
            }
        return ProfirestAPI.StorageError(kind: kind, path: e.path, reason: e.reason, isTransient: e.isTransient)
    }
}
#endif
