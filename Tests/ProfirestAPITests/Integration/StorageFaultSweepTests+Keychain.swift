#if os(Linux)
import AppleShims
import Foundation
import PlatformShims
import ProfirestAPI
import ProfirestTestSupport
import XCTest

/// The keychain storage — the library's file compiled against the in-memory keychain (PlatformShims) — as a storage
/// of the library under test, its errors carried over kind for kind.
final class ShimKeychainStorage: ProfirestAPI.TokenStorage, @unchecked Sendable {
    let keychain: PlatformShims.KeychainTokenStorage

    init(service: String) { keychain = PlatformShims.KeychainTokenStorage(service: service) }

    func get(_ key: String) throws -> String? { try carried { try keychain.get(key) } }
    func set(_ key: String, _ value: String) throws { try carried { try keychain.set(key, value) } }
    func remove(_ key: String) throws { try carried { try keychain.remove(key) } }

    private func carried<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as PlatformShims.StorageError {
            let kind: ProfirestAPI.StorageError.Kind =
                switch e.kind {
                case .corrupt: .corrupt
                case .unreadable: .unreadable
                case .unwritable: .unwritable
                case .lockFailed: .lockFailed
                case .reentrantLock: .reentrantLock
                case .keychain: .keychain
                }
            throw ProfirestAPI.StorageError(kind: kind, path: e.path, reason: e.reason, isTransient: e.isTransient)
        }
    }
}

extension StorageFaultSweepTests {
    /// The keychain's real refusals, one per kind of call: a locked device on reads and deletes, an I/O error on writes
    /// (what KeychainTokenStorage reports through `StorageError`, with the OSStatus). Not errSecMissingEntitlement: a
    /// storage without an access group answers it by moving to the file-based keychain, which on iOS is the same one.
    func testEveryOperationOfTheKeychainFailedInTurn() async throws {
        InMemoryKeychain.shared.reset()
        defer { InMemoryKeychain.shared.reset() }
        let statuses: [FaultyStorage.Operation: OSStatus] = [
            .read: errSecInteractionNotAllowed, .write: errSecIO, .remove: errSecInteractionNotAllowed,
        ]
        // The keychain itself refuses the next call with the real status; the storage's own error comes out.
        let injection: FaultyStorage.Injection = { operation in
            InMemoryKeychain.shared.failNext(with: statuses[operation] ?? errSecNotAvailable)
        }
        try await sweep("keychain") { run, plan in
            FaultyStorage(ShimKeychainStorage(service: "cz.profirest.sweep.\(run).\(UUID().uuidString)"), plan: plan,
                          injection: injection)
        }
    }
}
#endif
