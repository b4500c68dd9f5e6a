import Foundation

/// The default storage: values live in memory until the process ends, so the app must pair again after a
/// restart. Thread-safe; `withLock` and `withAsyncLock` exclude other threads and tasks of this process only, and a
/// task waiting for a key's lock is suspended without holding a thread.
///
/// ```swift
/// let storage = MemoryTokenStorage(); try storage.set("refresh", "r1")
/// ```
public final class MemoryTokenStorage: LockingTokenStorage, @unchecked Sendable {
    // @unchecked: `values` is only touched while `valuesLock` is held.
    private let valuesLock = NSLock()
    private var values: [String: String] = [:]
    private let keyLocks = OwnedLockTable()

    /// Makes an empty storage, for tests and for tools that may pair again on every start.
    ///
    /// ```swift
    /// let api = ProfirestApi(options: .init(clientID: "profirest-pos", storage: MemoryTokenStorage()))
    /// ```
    public init() {}

    /// Reads the value held under `key`, or nil; never throws.
    ///
    /// - Parameter key: the storage key, such as `profirest-api:profirest-pos`.
    /// - Returns: the value held under `key`, or nil.
    /// - Throws: nothing; the signature throws because ``TokenStorage`` allows it.
    public func get(_ key: String) throws -> String? {
        valuesLock.lock()
        defer { valuesLock.unlock() }
        return values[key]
    }

    /// Holds `value` under `key` until the process ends; never throws.
    ///
    /// - Parameters:
    ///   - key: the storage key, such as `profirest-api:profirest-pos`.
    ///   - value: the text to store.
    /// - Throws: nothing; the signature throws because ``TokenStorage`` allows it.
    public func set(_ key: String, _ value: String) throws {
        valuesLock.lock()
        defer { valuesLock.unlock() }
        values[key] = value
    }

    /// Forgets `key`, as unpairing does; never throws.
    ///
    /// - Parameter key: the storage key, such as `profirest-api:profirest-pos`.
    /// - Throws: nothing; the signature throws because ``TokenStorage`` allows it.
    public func remove(_ key: String) throws {
        valuesLock.lock()
        defer { valuesLock.unlock() }
        values[key] = nil
    }

    /// Runs `body` holding this key's lock, which keeps out the other threads of this process (the only ones that
    /// can see a memory storage); a nested call on the same thread throws `StorageError` (`.reentrantLock`).
    ///
    /// - Parameters:
    ///   - key: the storage key the lock is for.
    ///   - body: the work to do under the lock; `get`, `set` and `remove` may be called inside it.
    /// - Returns: what `body` returns.
    /// - Throws: ``StorageError`` (`.reentrantLock`) when this thread already holds the key's lock, and whatever `body`
    ///   throws.
    public func withLock<T>(_ key: String, _ body: () throws -> T) throws -> T {
        let lock = try unheldLock(key)
        lock.acquire()
        defer { lock.release() }
        return try body()
    }

    /// Runs `body` holding this key's lock, like ``withLock(_:_:)``, waiting for it by suspending the task (no thread
    /// is blocked), so that many clients sharing one memory storage cost no thread each.
    ///
    /// - Parameters:
    ///   - key: the storage key the lock is for.
    ///   - body: the work to do under the lock; `get`, `set` and `remove` may be called inside it.
    /// - Returns: what `body` returns.
    /// - Throws: ``StorageError`` (`.reentrantLock`) when the calling task or thread already holds the key's lock, and
    ///   whatever `body` throws.
    public func withAsyncLock<T: Sendable>(_ key: String, _ body: @Sendable () async throws -> T) async throws -> T {
        try await unheldLock(key).withAsyncLock(body)
    }

    private func unheldLock(_ key: String) throws -> OwnedLock {
        try keyLocks.unheldLock(key, key: key, path: "memory", scope: "key")
    }
}

extension MemoryTokenStorage: CustomReflectable {
    /// Shows `dump` and debuggers the keys held and never their values, since a state document holds the tokens.
    public var customMirror: Mirror {
        valuesLock.lock()
        defer { valuesLock.unlock() }
        return Mirror(self, children: ["keys": values.keys.sorted()], displayStyle: .class)
    }
}
