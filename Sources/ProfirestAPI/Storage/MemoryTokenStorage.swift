import Foundation

/// The default storage: values live in memory until the process ends, so the app must pair again after a
/// restart. Thread-safe; `withLock` excludes other threads of this process only.
///
/// ```swift
/// let storage = MemoryTokenStorage(); try storage.set("refresh", "r1")
/// ```
public final class MemoryTokenStorage: LockingTokenStorage, @unchecked Sendable {
    // @unchecked: `values` is only touched while `valuesLock` is held.
    private let valuesLock = NSLock()
    private var values: [String: String] = [:]
    private let keyLocks = OwnedLockTable()

    /// An empty storage. Usage: `let storage = MemoryTokenStorage()`
    public init() {}

    /// Usage: `let token = try storage.get("refresh")`
    public func get(_ key: String) throws -> String? {
        valuesLock.lock()
        defer { valuesLock.unlock() }
        return values[key]
    }

    /// Usage: `try storage.set("refresh", "r1")`
    public func set(_ key: String, _ value: String) throws {
        valuesLock.lock()
        defer { valuesLock.unlock() }
        values[key] = value
    }

    /// Usage: `try storage.remove("refresh")`
    public func remove(_ key: String) throws {
        valuesLock.lock()
        defer { valuesLock.unlock() }
        values[key] = nil
    }

    /// Runs `body` holding this key's lock; throws `StorageError` (`.reentrantLock`) on re-entry.
    /// Usage: `try storage.withLock("refresh") { try storage.get("refresh") }`
    public func withLock<T>(_ key: String, _ body: () throws -> T) throws -> T {
        let lock = keyLocks.lock(for: key)
        if lock.isHeldByCurrentThread {
            throw StorageError(
                kind: .reentrantLock, path: "memory",
                reason: "withLock(\"\(key)\") was called inside withLock for the same key on the same thread; "
                    + "the lock is not re-entrant, so use get/set/remove directly inside the body")
        }
        lock.acquire()
        defer { lock.release() }
        return try body()
    }
}

extension MemoryTokenStorage: CustomReflectable {
    /// What `dump` and debuggers show: the keys held, never their values (a state document holds the tokens).
    /// Usage: `dump(storage)`
    public var customMirror: Mirror {
        valuesLock.lock()
        defer { valuesLock.unlock() }
        return Mirror(self, children: ["keys": values.keys.sorted()], displayStyle: .class)
    }
}
