import Foundation

/// The storage's connections: up to `limit` open at once, idle ones kept for the next statement or lock.
///
/// A thread that already holds a connection (a `withLock` body calling the storage for another key, or a nested
/// `withLock`) gets one beyond the limit rather than waiting, since waiting there could wait forever for a connection
/// that only it would give back.
final class ConnectionPool: @unchecked Sendable {
    // @unchecked: `idle` and `open` are only touched while `condition` is locked.
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private let limit: Int
    private let connect: @Sendable () throws -> PostgresConnection

    /// - Parameters:
    ///   - limit: the most connections open at once (beyond it only for a thread that already holds one).
    ///   - connect: opens a connection, throwing `QueryFailure`.
    init(limit: Int, connect: @escaping @Sendable () throws -> PostgresConnection) {
        self.limit = max(1, limit)
        self.connect = connect
    }

    /// An idle connection, or a new one; waits while `limit` connections are in use unless `beyondLimit`.
    func take(beyondLimit: Bool) throws -> PostgresConnection {
        condition.lock()
        while idle.isEmpty && open >= limit && !beyondLimit { condition.wait() }
        if let connection = idle.popLast() {
            condition.unlock()
            return connection
        }
        open += 1
        condition.unlock()
        do {
            return try connect()
        } catch {
            closed()
            throw error
        }
    }

    /// Takes `connection` back for the next user.
    func giveBack(_ connection: PostgresConnection) {
        condition.lock()
        defer { condition.unlock() }
        if open > limit {
            open -= 1  // one opened beyond the limit: closed when the last reference goes, below
        } else {
            idle.append(connection)
        }
        condition.signal()
    }

    /// Forgets a connection that is dead or in an unknown state (closing it ends its session and so its locks).
    func discard(_ connection: PostgresConnection) {
        closed()
    }

    /// A new connection in place of `dead`, which is discarded; the slot stays taken.
    func replace(_ dead: PostgresConnection) throws -> PostgresConnection {
        do {
            return try connect()
        } catch {
            closed()
            throw error
        }
    }

    private func closed() {
        condition.lock()
        open -= 1
        condition.signal()
        condition.unlock()
    }
}
