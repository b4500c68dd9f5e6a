#if os(Linux)
import AppleShims
import Foundation
import PlatformShims
import ProfirestAPI
import ProfirestTestSupport
import XCTest

// ShimKeychainStorage: Sources/ProfirestRefreshProbe/ShimKeychainStorage.swift, linked into this target.
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
