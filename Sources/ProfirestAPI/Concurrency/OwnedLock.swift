import Foundation

/// A mutex that knows who holds it — a thread (`acquire()`) or a task (`withAsyncLock`) — so that re-entry is
/// reported instead of deadlocking, and so that a storage's `set` inside its own `withLock` body can tell that the
/// lock is already its own.
///
/// Waiters are served in the order they came, threads and tasks alike. A task waits without a thread: it is
/// suspended (a continuation in the queue), so a thousand connections waiting for their storage locks park no thread
/// of the cooperative pool. The lock a task holds belongs to that task and the tasks it starts while holding it
/// (task-local values are inherited), for as long as it holds it.
package final class OwnedLock: @unchecked Sendable {
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
    package var isHeldByCurrentThread: Bool {
        condition.lock()
        defer { condition.unlock() }
        return owner === Thread.current
    }

    /// Whether the caller holds the lock: this thread through `acquire()`, or this task (or a task that started it)
    /// inside `withAsyncLock`. A nested acquisition would wait for itself: check this first.
    package var isHeldByCaller: Bool {
        let tickets = LockTicket.held
        condition.lock()
        defer { condition.unlock() }
        guard let owner else { return false }
        return owner === Thread.current || tickets.contains { $0 === owner }
    }

    /// Waits, blocking this thread, until the lock is this thread's. The caller checks `isHeldByCaller` first:
    /// acquiring twice would wait forever.
    package func acquire() {
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
    package func release() {
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
    package func withAsyncLock<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        let ticket = LockTicket()
        if !tryAcquire(ticket) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                enqueue(ticket, continuation)
            }
        }
        defer { release() }
        return try await LockTicket.$held.withValue(LockTicket.held + [ticket]) { try await body() }
    }

    /// How many callers wait for the lock now: a moment's figure, for a test that needs a caller to be queued.
    package var waiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count
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
package final class LockTicket: Sendable {
    @TaskLocal package static var held: [LockTicket] = []
}

/// One `OwnedLock` per name, created on first use and kept for the life of the process.
package final class OwnedLockTable: @unchecked Sendable {
    // @unchecked: `locks` is only touched while `guardLock` is held.
    private let guardLock = NSLock()
    private var locks: [String: OwnedLock] = [:]

    package init() {}

    package func lock(for name: String) -> OwnedLock {
        guardLock.lock()
        defer { guardLock.unlock() }
        if let existing = locks[name] { return existing }
        let created = OwnedLock()
        locks[name] = created
        return created
    }
}
