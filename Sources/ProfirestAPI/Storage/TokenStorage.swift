/// Where the library keeps secrets that must outlive a request: pairing tokens, refresh tokens, PKCE state.
///
/// Synchronous on purpose: apps build authorization URLs synchronously, and every backend here is fast.
/// Implementations must be thread-safe.
///
/// ```swift
/// let storage: any TokenStorage = MemoryTokenStorage(); try storage.set("refresh", "r1")
/// ```
public protocol TokenStorage: Sendable {
    /// The value stored under `key`, or nil when there is none. Usage: `let t = try storage.get("refresh")`
    func get(_ key: String) throws -> String?
    /// Stores `value` under `key`, replacing any previous value. Usage: `try storage.set("refresh", token)`
    func set(_ key: String, _ value: String) throws
    /// Forgets `key`; removing a missing key is not an error. Usage: `try storage.remove("refresh")`
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
    /// Runs `body` while holding the lock for `key`; waits as long as another holder keeps it.
    /// Usage: `try storage.withLock("refresh") { try storage.set("refresh", newToken) }`
    func withLock<T>(_ key: String, _ body: () throws -> T) throws -> T
}
