/// A `TokenStorage` that can hold an exclusive lock for `key` across threads of this process and across
/// processes, so that two clients sharing the storage do not both spend the same single-use refresh token.
///
/// Inside `body` re-read what you need with `get`: another process may have changed it while you waited.
/// The lock is **not re-entrant**: calling `withLock` again for the same key (or, for `FileTokenStorage`,
/// the same file) from inside `body` throws `StorageError` instead of deadlocking where the storage can
/// detect it. `get`, `set` and `remove` may be called freely inside `body`. `withLock` blocks the calling
/// thread while it waits; `withAsyncLock` waits for the same lock by suspending the task instead.
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

    /// Runs `body` while holding the same lock as `withLock`, waiting for it by suspending the calling task instead
    /// of blocking its thread, so that a process serving many connections parks no thread per refresh.
    ///
    /// The library takes every change of the state document (a refresh, a cursor after each batch of events, a
    /// pairing) through this lock. `MemoryTokenStorage`, `FileTokenStorage`, `KeychainTokenStorage` and
    /// `PostgresTokenStorage` (product `ProfirestPostgres`) implement it; the default runs `withLock` on one of a few threads the process shares for
    /// that (at most four at once; more callers wait their turn), and `body` meanwhile on the calling task. The lock
    /// belongs to the task running `body` (and to tasks it starts) and is not re-entrant: a nested `withLock` or
    /// `withAsyncLock` for the same key throws `StorageError` (`.reentrantLock`) where the storage can detect it.
    ///
    /// - Parameters:
    ///   - key: the storage key the lock is for.
    ///   - body: the work to do under the lock, which may await (a token request over the network); `get`, `set`
    ///     and `remove` may be called inside it.
    /// - Returns: what `body` returns.
    /// - Throws: ``StorageError`` when the lock cannot be taken (`.lockFailed`) or is already held by the calling task
    ///   (`.reentrantLock`), and whatever `body` throws.
    ///
    /// ```swift
    /// try await storage.withAsyncLock(key) { try storage.set(key, try await renewed(storage.get(key))) }
    /// ```
    func withAsyncLock<T: Sendable>(_ key: String, _ body: @Sendable () async throws -> T) async throws -> T
}

extension LockingTokenStorage {
    /// Holds `withLock` on a thread of the process's shared pool for as long as `body` runs, so that a storage with
    /// only a synchronous lock costs a bounded number of threads, never one per connection.
    ///
    /// - Parameters:
    ///   - key: the storage key the lock is for.
    ///   - body: the work to do under the lock; `get`, `set` and `remove` may be called inside it.
    /// - Returns: what `body` returns.
    /// - Throws: what `withLock` throws (``StorageError`` when the lock cannot be taken), and whatever `body` throws.
    public func withAsyncLock<T: Sendable>(_ key: String, _ body: @Sendable () async throws -> T) async throws -> T {
        try await LockBridge.run(self, key: key) { bridge in
            try await LockBridge.$current.withValue(bridge) { try await body() }
        }
    }
}
