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

/// A `LockingTokenStorage` whose lock can also be waited for without blocking a thread, so that a process serving
/// many connections — a thousand restaurants, each refreshing its tokens now and then — does not park a thread for
/// every refresh waiting on the lock or holding it over the network call.
///
/// The library uses `withAsyncLock` for every change of the state document (a refresh, a cursor after each batch of
/// events, a pairing) when the storage offers it; `FileTokenStorage`, `MemoryTokenStorage` and the PostgreSQL storage
/// (`PostgresTokenStorage`, product `ProfirestPostgres`) do. A storage that implements only ``LockingTokenStorage``
/// keeps working: its synchronous `withLock` then runs on one of a few threads the process shares for that (at most
/// four at once; more refreshes wait their turn).
///
/// Both locks are one lock: `withLock` and `withAsyncLock` for the same key exclude each other. Inside the async body
/// `get`, `set` and `remove` may be called as inside `withLock`; the lock belongs to the task running the body (and to
/// tasks it starts), and it is not re-entrant: a nested `withLock` or `withAsyncLock` for the same key from inside the
/// body throws `StorageError` (`.reentrantLock`) where the storage can detect it.
///
/// ```swift
/// let token = try await storage.withAsyncLock("refresh") { try storage.get("refresh") }
/// ```
public protocol AsyncLockingTokenStorage: LockingTokenStorage {
    /// Runs `body` while holding the lock for `key`, like `withLock`, but waits for the lock by suspending the calling
    /// task instead of blocking its thread, and lets `body` await (a token request over the network).
    ///
    /// - Parameters:
    ///   - key: the storage key the lock is for.
    ///   - body: the work to do under the lock; `get`, `set` and `remove` may be called inside it.
    /// - Returns: what `body` returns.
    /// - Throws: ``StorageError`` when the lock cannot be taken (`.lockFailed`) or is already held by the calling task
    ///   (`.reentrantLock`), and whatever `body` throws.
    ///
    /// ```swift
    /// try await storage.withAsyncLock(key) { try storage.set(key, try await renewed(storage.get(key))) }
    /// ```
    func withAsyncLock<T: Sendable>(_ key: String, _ body: @Sendable () async throws -> T) async throws -> T
}
