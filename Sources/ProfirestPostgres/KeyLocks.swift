import Foundation
import ProfirestAPI

/// A `withLock` or `withAsyncLock` in progress: the key, its advisory lock, and the session that holds it.
final class LockHolder: @unchecked Sendable {
    // @unchecked: `lost` is only read and written by the body's thread or task (one step at a time), `active` and the
    // session's use are guarded by `guardLock`.
    let key: String
    let lockID: Int64
    let connection: PostgresConnection
    /// The storage whose lock this is (its `LockHolders.owner`; a task-local holder is only that storage's).
    let owner: ObjectIdentifier
    /// The session ended while the lock was held: the lock is gone, and another process may have taken it.
    var lost = false
    private let guardLock = NSLock()
    private var released = false

    init(key: String, lockID: Int64, connection: PostgresConnection, owner: ObjectIdentifier) {
        self.key = key
        self.lockID = lockID
        self.connection = connection
        self.owner = owner
    }

    /// Still held: a task that inherited this holder after the body ended holds nothing.
    var isActive: Bool {
        guardLock.lock()
        defer { guardLock.unlock() }
        return !released
    }

    func markReleased() {
        guardLock.lock()
        released = true
        guardLock.unlock()
    }

    /// Runs a statement on the session, one at a time (tasks the body started may share the holder).
    func execute(_ sql: String, _ parameters: [String]) -> Result<[String?], QueryFailure> {
        guardLock.lock()
        defer { guardLock.unlock() }
        return connection.execute(sql, parameters)
    }

    /// The holders of the calling task's `withAsyncLock` bodies (inherited by the tasks they start).
    @TaskLocal static var ofTask: [LockHolder] = []
}

/// The locks each thread holds through one storage, so that `get`, `set` and `remove` inside a body go through the
/// session that holds that key's lock; the locks a task holds are in `LockHolder.ofTask`.
final class LockHolders: @unchecked Sendable {
    // @unchecked: `byThread` is only touched while `guardLock` is held.
    private let guardLock = NSLock()
    private var byThread: [ObjectIdentifier: [LockHolder]] = [:]

    /// Whose holders these are: a `LockHolder` made for this storage carries it.
    var owner: ObjectIdentifier { ObjectIdentifier(self) }

    /// The holder of `key`'s lock on this thread or in this task, if the caller holds it.
    func holder(of key: String) -> LockHolder? {
        if let held = LockHolder.ofTask.last(where: { $0.owner == owner && $0.key == key && $0.isActive }) {
            return held
        }
        guardLock.lock()
        defer { guardLock.unlock() }
        return byThread[ObjectIdentifier(Thread.current)]?.last { $0.key == key }
    }

    /// Whether the caller (this thread, or this task) holds any lock of this storage (and so a connection).
    var callerHoldsAny: Bool {
        if LockHolder.ofTask.contains(where: { $0.owner == owner && $0.isActive }) { return true }
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
