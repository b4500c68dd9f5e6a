import Foundation

extension OwnedLockTable {
    /// The lock named `name`, checked not to be held by the caller already: the storages' locks are not re-entrant,
    /// so waiting for one the caller holds would wait for ever, and a clear error is better.
    ///
    /// - Parameters:
    ///   - name: the lock's name in this table (a file path, a keychain service, a key).
    ///   - key: the storage key `withLock` was called for, named in the error.
    ///   - path: where the storage keeps it, for the error's `path`.
    ///   - scope: what the lock covers, in words ("key", "file", "keychain service").
    package func unheldLock(_ name: String, key: String, path: String, scope: String) throws -> OwnedLock {
        let lock = lock(for: name)
        if lock.isHeldByCaller {
            throw StorageError(
                kind: .reentrantLock, path: path,
                reason: "withLock(\"\(key)\") was called inside withLock for the same \(scope) on the same thread or "
                    + "task; the lock is not re-entrant, so use get/set/remove directly inside the body")
        }
        return lock
    }
}
