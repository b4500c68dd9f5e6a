import Foundation

/// A mutex that knows who holds it — a thread (`acquire()`) or a task (`withAsyncLock`) — so that a nested `withLock`
/// on the same key is reported (`StorageError.Kind.reentrantLock`) instead of waiting forever for itself. (The same
/// as ProfirestAPI's internal lock of its storages, which this module cannot see.)
///
/// Waiters are served in the order they came, threads and tasks alike. A task waits without a thread: it is
/// suspended (a continuation in the queue), so a thousand connections waiting for their storage locks park no thread
/// of the cooperative pool. The lock a task holds belongs to that task and the tasks it starts while holding it
/// (task-local values are inherited), for as long as it holds it.
final class OwnedLock: @unchecked Sendable {
    // @unchecked: `owner` and `queue` are only read or written while `condition` is locked.
    private let condition = NSCondition()
    /// A `Thread`, or the `LockTicket` of a task's `withAsyncLock`.
    private var owner: AnyObject?
    private var queue: [Waiter] = []

    private enum Waiter {
        case thread(Thread)
        case task(LockTicket, CheckedContinuation<Void, Never>)
    }

    /// Whether the calling thread holds the lock through `acquire()`.
    var isHeldByCurrentThread: Bool {
        condition.lock()
        defer { condition.unlock() }
        return owner === Thread.current
    }

    /// Whether the caller holds the lock: this thread through `acquire()`, or this task (or a task that started it)
    /// inside `withAsyncLock`. A nested acquisition would wait for itself: check this first.
    var isHeldByCaller: Bool {
        let tickets = LockTicket.held
        condition.lock()
        defer { condition.unlock() }
        guard let owner else { return false }
        return owner === Thread.current || tickets.contains { $0 === owner }
    }

    /// Waits, blocking this thread, until the lock is this thread's. The caller checks `isHeldByCaller` first:
    /// acquiring twice would wait forever.
    func acquire() {
        let me = Thread.current
        condition.lock()
        defer { condition.unlock() }
        if owner == nil && queue.isEmpty {
            owner = me
            return
        }
        queue.append(.thread(me))
        while owner !== me { condition.wait() }
    }

    /// Hands the lock to the next waiter, or frees it.
    func release() {
        condition.lock()
        guard !queue.isEmpty else {
            owner = nil
            condition.unlock()
            return
        }
        switch queue.removeFirst() {
        case .thread(let thread):
            owner = thread
            condition.broadcast()
            condition.unlock()
        case .task(let ticket, let continuation):
            owner = ticket
            condition.unlock()
            continuation.resume()
        }
    }

    /// Runs `body` holding the lock, waiting for it without blocking a thread; `body` and the tasks it starts see the
    /// lock as theirs (`isHeldByCaller`). The caller checks `isHeldByCaller` first.
    func withAsyncLock<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        let ticket = LockTicket()
        if !tryAcquire(ticket) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                enqueue(ticket, continuation)
            }
        }
        defer { release() }
        return try await LockTicket.$held.withValue(LockTicket.held + [ticket]) { try await body() }
    }

    private func tryAcquire(_ ticket: LockTicket) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard owner == nil && queue.isEmpty else { return false }
        owner = ticket
        return true
    }

    private func enqueue(_ ticket: LockTicket, _ continuation: CheckedContinuation<Void, Never>) {
        condition.lock()
        if owner == nil && queue.isEmpty {
            owner = ticket
            condition.unlock()
            continuation.resume()
            return
        }
        queue.append(.task(ticket, continuation))
        condition.unlock()
    }
}

/// The identity of one `OwnedLock.withAsyncLock` in progress; the locks a task holds are the tickets in its
/// task-local `held` that are still their locks' owners (a ticket inherited by a task that outlives the body owns
/// nothing any more).
final class LockTicket: Sendable {
    @TaskLocal static var held: [LockTicket] = []
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
