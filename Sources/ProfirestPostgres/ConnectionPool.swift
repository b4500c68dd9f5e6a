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
/// A thread that already holds a connection (a `withLock` body calling the storage for another key, or a nested
/// `withLock`) gets one beyond the limit rather than waiting, since waiting there could wait forever for a connection
/// that only it would give back.
final class ConnectionPool: @unchecked Sendable {
    // @unchecked: `idle`, `open` and `lockHolders` are only touched while `condition` is locked.
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    /// Connections taken for a lock and not given back yet.
    private var lockHolders = 0
    private let limit: Int
    private let lockLimit: Int
    private let connect: @Sendable () throws -> PostgresConnection

    /// - Parameters:
    ///   - limit: the most connections open at once (beyond it only for a thread that already holds one); at least 2,
    ///     of which three quarters at most (at least one fewer) for locks.
    ///   - connect: opens a connection, throwing `QueryFailure`.
    init(limit: Int, connect: @escaping @Sendable () throws -> PostgresConnection) {
        self.limit = max(2, limit)
        lockLimit = self.limit - max(1, self.limit / 4)
        self.connect = connect
    }

    /// An idle connection, or a new one; waits while `limit` connections are in use (for a lock, also while
    /// `lockLimit` locks are held) unless `beyondLimit`.
    func take(beyondLimit: Bool, forLock: Bool = false) throws -> PostgresConnection {
        condition.lock()
        while !beyondLimit && ((idle.isEmpty && open >= limit) || (forLock && lockHolders >= lockLimit)) {
            condition.wait()
        }
        if forLock { lockHolders += 1 }
        if let connection = idle.popLast() {
            condition.unlock()
            return connection
        }
        open += 1
        condition.unlock()
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
        defer { condition.unlock() }
        if forLock { lockHolders -= 1 }
        if open > limit {
            open -= 1  // one opened beyond the limit: closed when the last reference goes, below
        } else {
            idle.append(connection)
        }
        // Statements and locks wait for different things: wake them all to look again.
        condition.broadcast()
    }

    /// Forgets a connection that is dead or in an unknown state (closing it ends its session and so its locks).
    func discard(_ connection: PostgresConnection, forLock: Bool = false) {
        closed(forLock: forLock)
    }

    /// A new connection in place of `dead`, which is discarded; the slot stays taken (`forLock`: a lock's).
    func replace(_ dead: PostgresConnection, forLock: Bool = false) throws -> PostgresConnection {
        do {
            return try connect()
        } catch {
            closed(forLock: forLock)
            throw error
        }
    }

    private func closed(forLock: Bool) {
        condition.lock()
        open -= 1
        if forLock { lockHolders -= 1 }
        condition.broadcast()
        condition.unlock()
    }
}
