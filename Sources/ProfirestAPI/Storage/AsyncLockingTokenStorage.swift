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
