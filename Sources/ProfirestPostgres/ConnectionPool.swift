import Foundation

/// The storage's connections: up to `limit` open at once, idle ones kept for the next statement or lock.
///
/// Lock holders may take only `lockLimit` of them (all but a quarter, at least one): a lock is held across a refresh's
/// network call, which runs on the process's cooperative threads, while a plain statement (a read of the state from
/// async code) may be waiting for a connection on one of those very threads. Were every connection held by a lock
/// whose refresh waits for a cooperative thread, and every cooperative thread waiting for a connection, the process
/// would stop; with connections kept for statements, a statement waits only for other statements, which end by
/// themselves (make soak's replica trials found the stop with the limit shared).
///
/// A lock for `withAsyncLock` is waited for without a thread (`takeLock`): the task is suspended until a lock's share
/// is free. A caller that already holds a connection (a `withLock` body calling the storage for another key, or a
/// nested `withLock`) gets one beyond the limit rather than waiting, since waiting there could wait forever for a
/// connection that only it would give back.
final class ConnectionPool: @unchecked Sendable {
    // @unchecked: `idle`, `open`, `lockHolders` and `lockWaiters` are only touched while `condition` is locked.
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    /// Connections taken for a lock and not given back yet.
    private var lockHolders = 0
    /// Tasks waiting for a lock's connection, in order; each is handed an idle connection or an open slot to fill.
    private var lockWaiters: [CheckedContinuation<Reserved, Never>] = []
    private let limit: Int
    private let lockLimit: Int
    private let connect: @Sendable () throws -> PostgresConnection

    /// What `takeLock` was given: an idle connection, or a slot (counted in `open`) for a new one.
    private enum Reserved: @unchecked Sendable {
        // @unchecked: the connection is handed from the pool to the one waiter, never shared.
        case idle(PostgresConnection)
        case slot
    }

    /// - Parameters:
    ///   - limit: the most connections open at once (beyond it only for a caller that already holds one); at least 2,
    ///     of which three quarters at most (at least one fewer) for locks.
    ///   - connect: opens a connection, throwing `QueryFailure`.
    init(limit: Int, connect: @escaping @Sendable () throws -> PostgresConnection) {
        self.limit = max(2, limit)
        lockLimit = self.limit - max(1, self.limit / 4)
        self.connect = connect
    }

    /// An idle connection, or a new one; waits while `limit` connections are in use (for a lock, also while
    /// `lockLimit` locks are held, or tasks wait for one) unless `beyondLimit`.
    func take(beyondLimit: Bool, forLock: Bool = false) throws -> PostgresConnection {
        condition.lock()
        while !beyondLimit
            && ((idle.isEmpty && open >= limit) || (forLock && (lockHolders >= lockLimit || !lockWaiters.isEmpty)))
        {
            condition.wait()
        }
        if forLock { lockHolders += 1 }
        if let connection = idle.popLast() {
            condition.unlock()
            return connection
        }
        open += 1
        condition.unlock()
        return try opened(forLock: forLock)
    }

    /// A connection for a lock, waiting for a free share of the pool suspended rather than on a thread.
    func takeLock(beyondLimit: Bool) async throws -> PostgresConnection {
        let reserved: Reserved
        if let now = reserveNow(beyondLimit: beyondLimit) {
            reserved = now
        } else {
            reserved = await withCheckedContinuation { (continuation: CheckedContinuation<Reserved, Never>) in
                enqueue(continuation)
            }
        }
        switch reserved {
        case .idle(let connection): return connection
        case .slot: return try opened(forLock: true)
        }
    }

    /// A lock's connection at once when one is free (or `beyondLimit`), counted as taken; nil when it must wait.
    private func reserveNow(beyondLimit: Bool) -> Reserved? {
        condition.lock()
        defer { condition.unlock() }
        guard beyondLimit || (lockWaiters.isEmpty && lockHolders < lockLimit && (!idle.isEmpty || open < limit)) else {
            return nil
        }
        return reserveForLock()
    }

    private func enqueue(_ continuation: CheckedContinuation<Reserved, Never>) {
        condition.lock()
        lockWaiters.append(continuation)
        let admitted = admitLockWaiters()
        condition.unlock()
        for (waiter, reserved) in admitted { waiter.resume(returning: reserved) }
    }

    /// With `condition` locked: counts a lock's connection as taken and hands out an idle one or a slot.
    private func reserveForLock() -> Reserved {
        lockHolders += 1
        if let connection = idle.popLast() { return .idle(connection) }
        open += 1
        return .slot
    }

    /// With `condition` locked: the waiting tasks that may have a lock's connection now (resumed by the caller once
    /// it unlocked).
    private func admitLockWaiters() -> [(CheckedContinuation<Reserved, Never>, Reserved)] {
        var admitted: [(CheckedContinuation<Reserved, Never>, Reserved)] = []
        while !lockWaiters.isEmpty && lockHolders < lockLimit && (!idle.isEmpty || open < limit) {
            admitted.append((lockWaiters.removeFirst(), reserveForLock()))
        }
        return admitted
    }

    /// Opens a connection for a slot already counted; the slot is freed when that fails.
    private func opened(forLock: Bool) throws -> PostgresConnection {
        do {
            return try connect()
        } catch {
            closed(forLock: forLock)
            throw error
        }
    }

    /// Takes `connection` back for the next user (`forLock`: it was taken for a lock).
    func giveBack(_ connection: PostgresConnection, forLock: Bool = false) {
        condition.lock()
        if forLock { lockHolders -= 1 }
        if open > limit {
            open -= 1  // one opened beyond the limit: closed when the last reference goes, below
        } else {
            idle.append(connection)
        }
        released()
    }

    /// Forgets a connection that is dead or in an unknown state (closing it ends its session and so its locks).
    func discard(_ connection: PostgresConnection, forLock: Bool = false) {
        closed(forLock: forLock)
    }

    /// A new connection in place of `dead`, which is discarded; the slot stays taken (`forLock`: a lock's).
    func replace(_ dead: PostgresConnection, forLock: Bool = false) throws -> PostgresConnection {
        try opened(forLock: forLock)
    }

    private func closed(forLock: Bool) {
        condition.lock()
        open -= 1
        if forLock { lockHolders -= 1 }
        released()
    }

    /// With `condition` locked: wakes the threads and tasks that may go on now, and unlocks.
    private func released() {
        let admitted = admitLockWaiters()
        // Statements and locks wait for different things: wake them all to look again.
        condition.broadcast()
        condition.unlock()
        for (waiter, reserved) in admitted { waiter.resume(returning: reserved) }
    }
}
