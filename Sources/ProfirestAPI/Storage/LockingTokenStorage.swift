/// A `TokenStorage` that can hold an exclusive lock for `key` across threads of this process and across
/// processes, so that two clients sharing the storage do not both spend the same single-use refresh token.
///
/// Inside `body` re-read what you need with `get`: another process may have changed it while you waited.
/// The lock is **not re-entrant**: calling `withLock` again for the same key (or, for `FileTokenStorage`,
/// the same file) from inside `body` throws `StorageError` instead of deadlocking where the storage can
/// detect it. `get`, `set` and `remove` may be called freely inside `body`. Waiting blocks the calling
/// thread, so keep bodies short; ``AsyncLockingTokenStorage`` adds a form that waits without blocking one.
///
/// ```swift
/// let token = try storage.withLock("refresh") { try storage.get("refresh") }
/// ```
public protocol LockingTokenStorage: TokenStorage {
    /// Runs `body` while holding the lock for `key`, so that a read, a token refresh and the write of its result
    /// happen as one step for every thread and process using the storage; waits as long as another holder keeps it.
    ///
    /// - Parameters:
    ///   - key: the storage key the lock is for.
    ///   - body: the work to do under the lock; `get`, `set` and `remove` may be called inside it.
    /// - Returns: what `body` returns.
    /// - Throws: ``StorageError`` when the lock cannot be taken (`.lockFailed`) or is already held by this thread
    ///   (`.reentrantLock`), and whatever `body` throws.
    ///
    /// ```swift
    /// try storage.withLock(key) { try storage.set(key, renewed(try storage.get(key))) }
    /// ```
    func withLock<T>(_ key: String, _ body: () throws -> T) throws -> T
}
