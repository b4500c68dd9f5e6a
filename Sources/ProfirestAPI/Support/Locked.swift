import Foundation

/// A value guarded by a lock, for the few pieces of shared mutable state (per-task callbacks, page cursors).
///
/// NSLock rather than `Synchronization.Mutex`: `Mutex` needs macOS 15 / iOS 18 (tvOS 18, watchOS 11), newer than the
/// package's deployment floor (macOS 12, iOS 15, tvOS 15, watchOS 8; Package.swift).
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is read and written only inside `withLock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A mutex that knows which thread holds it, so re-entry can be reported instead of deadlocking and
/// `set` inside `withLock` can tell that the lock is already its own.
final class OwnedLock: @unchecked Sendable {
    // @unchecked: `owner` is only read or written while `condition` is locked.
    private let condition = NSCondition()
    private var owner: Thread?

    var isHeldByCurrentThread: Bool {
        condition.lock()
        defer { condition.unlock() }
        return owner === Thread.current
    }

    /// The caller checks `isHeldByCurrentThread` first: acquiring twice on one thread would wait forever.
    func acquire() {
        let me = Thread.current
        condition.lock()
        while owner != nil { condition.wait() }
        owner = me
        condition.unlock()
    }

    func release() {
        condition.lock()
        owner = nil
        condition.signal()
        condition.unlock()
    }
}

/// One `OwnedLock` per name, created on first use and kept for the life of the process.
final class OwnedLockTable: @unchecked Sendable {
    // @unchecked: `locks` is only touched while `guardLock` is held.
    private let guardLock = NSLock()
    private var locks: [String: OwnedLock] = [:]

    func lock(for name: String) -> OwnedLock {
        guardLock.lock()
        defer { guardLock.unlock() }
        if let existing = locks[name] { return existing }
        let created = OwnedLock()
        locks[name] = created
        return created
    }
}
