import Foundation

/// A mutex that knows which thread holds it, so that a nested `withLock` on the same key is reported
/// (`StorageError.Kind.reentrantLock`) instead of waiting forever for itself.
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

/// A `withLock` in progress: the key, its advisory lock, and the session that holds it.
final class LockHolder: @unchecked Sendable {
    // @unchecked: `lost` is only read and written by the thread that runs the body (the holder's own).
    let key: String
    let lockID: Int64
    let connection: PostgresConnection
    /// The session ended while the lock was held: the lock is gone, and another process may have taken it.
    var lost = false

    init(key: String, lockID: Int64, connection: PostgresConnection) {
        self.key = key
        self.lockID = lockID
        self.connection = connection
    }
}

/// The locks each thread holds through one storage, so that `get`, `set` and `remove` inside a body go through the
/// session that holds that key's lock.
final class LockHolders: @unchecked Sendable {
    // @unchecked: `byThread` is only touched while `guardLock` is held.
    private let guardLock = NSLock()
    private var byThread: [ObjectIdentifier: [LockHolder]] = [:]

    /// The holder of `key`'s lock on this thread, if this thread holds it.
    func holder(of key: String) -> LockHolder? {
        guardLock.lock()
        defer { guardLock.unlock() }
        return byThread[ObjectIdentifier(Thread.current)]?.last { $0.key == key }
    }

    /// Whether this thread holds any lock of this storage (and so a connection).
    var currentThreadHoldsAny: Bool {
        guardLock.lock()
        defer { guardLock.unlock() }
        return byThread[ObjectIdentifier(Thread.current)] != nil
    }

    func push(_ holder: LockHolder) {
        guardLock.lock()
        defer { guardLock.unlock() }
        byThread[ObjectIdentifier(Thread.current), default: []].append(holder)
    }

    func pop(_ holder: LockHolder) {
        guardLock.lock()
        defer { guardLock.unlock() }
        let me = ObjectIdentifier(Thread.current)
        byThread[me]?.removeAll { $0 === holder }
        if byThread[me]?.isEmpty == true { byThread[me] = nil }
    }
}
