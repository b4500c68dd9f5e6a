/// Where the library keeps secrets that must outlive a request: pairing tokens, refresh tokens, PKCE state.
///
/// Synchronous on purpose: apps build authorization URLs synchronously, and every backend here is fast.
/// Implementations must be thread-safe.
///
/// ```swift
/// let storage: any TokenStorage = MemoryTokenStorage(); try storage.set("refresh", "r1")
/// ```
public protocol TokenStorage: Sendable {
    /// Reads the value stored under `key` — the library keeps one JSON document per connection there — or nil when
    /// there is none.
    ///
    /// Throw ``StorageError`` when the storage cannot be read: an unreadable storage must not look empty, or the
    /// connection would be forgotten silently.
    ///
    /// - Parameter key: the storage key, such as `profirest-api:profirest-pos`.
    /// - Returns: the stored value, or nil when there is none.
    /// - Throws: ``StorageError`` when the storage cannot be read (`.unreadable`, `.corrupt`, `.keychain`).
    func get(_ key: String) throws -> String?
    /// Stores `value` under `key`, replacing any previous value, so that the next `get` — in any process sharing the
    /// storage — sees it.
    ///
    /// - Parameters:
    ///   - key: the storage key, such as `profirest-api:profirest-pos`.
    ///   - value: the text to store.
    /// - Throws: ``StorageError`` when the value cannot be written (`.unwritable`, `.keychain`); nothing was changed
    ///   then.
    func set(_ key: String, _ value: String) throws
    /// Forgets `key`, for unpairing; removing a key that is not there is not an error.
    ///
    /// - Parameter key: the storage key, such as `profirest-api:profirest-pos`.
    /// - Throws: ``StorageError`` when the value cannot be removed.
    func remove(_ key: String) throws
}

/// A `TokenStorage` that can hold an exclusive lock for `key` across threads of this process and across
/// processes, so that two clients sharing the storage do not both spend the same single-use refresh token.
///
/// Inside `body` re-read what you need with `get`: another process may have changed it while you waited.
/// The lock is **not re-entrant**: calling `withLock` again for the same key (or, for `FileTokenStorage`,
/// the same file) from inside `body` throws `StorageError` instead of deadlocking where the storage can
/// detect it. `get`, `set` and `remove` may be called freely inside `body`. Waiting blocks the calling
/// thread, so keep bodies short.
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
