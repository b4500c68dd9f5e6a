import Foundation

/// The storage's connections, in two lanes of up to `limit` each: statements (a connection taken for one statement and
/// given back at once) and locks (a connection held for a whole `withLock` body). Idle connections are kept, at most
/// `limit` of them, for the next statement or lock of either lane.
///
/// Two lanes so that a statement never waits for a lock's body: a body may await the network (a token refresh), and a
/// thread blocked waiting for a statement's connection must not wait for that — with every thread of the cooperative
/// pool blocked so, the bodies could never finish. A statement's wait is for other statements only, which end on
/// their own. A task waiting for a lock's connection (`takeLock`) is suspended, not blocked.
///
/// A caller that already holds a connection (a `withLock` body calling the storage for another key, or a nested
/// `withLock`) gets one beyond the limit rather than waiting, since waiting there could wait forever for a connection
/// that only it would give back.
final class ConnectionPool: @unchecked Sendable {
    // @unchecked: `idle`, `inUse` and `lockWaiters` are only touched while `condition` is locked.
    enum Lane: Int {
        case statement, lock
    }

    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    /// Connections taken (or being opened) per lane.
    private var inUse = [0, 0]
    /// Tasks waiting for a lock's connection, in order.
    private var lockWaiters: [CheckedContinuation<Void, Never>] = []
    private let limit: Int
    private let connect: @Sendable () throws -> PostgresConnection

    /// - Parameters:
    ///   - limit: the most connections in use at once per lane (beyond it only for a caller that already holds one).
    ///   - connect: opens a connection, throwing `QueryFailure`.
    init(limit: Int, connect: @escaping @Sendable () throws -> PostgresConnection) {
        self.limit = max(1, limit)
        self.connect = connect
    }

    /// An idle connection, or a new one; blocks while `limit` connections of `lane` are in use unless `beyondLimit`.
    func take(_ lane: Lane, beyondLimit: Bool) throws -> PostgresConnection {
        condition.lock()
        while inUse[lane.rawValue] >= limit && !beyondLimit { condition.wait() }
        return try claimed(lane)
    }

    /// A connection for a lock, waiting for a free slot without blocking the thread.
    func takeLock(beyondLimit: Bool) async throws -> PostgresConnection {
        if !tryReserveLock(beyondLimit: beyondLimit) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                condition.lock()
                if inUse[Lane.lock.rawValue] < limit && lockWaiters.isEmpty {
                    inUse[Lane.lock.rawValue] += 1
                    condition.unlock()
                    continuation.resume()
                } else {
                    lockWaiters.append(continuation)
                    condition.unlock()
                }
            }
        }
        return try claimReserved()
    }

    /// The slot `takeLock` reserved (counted in `inUse`) gets an idle connection, or a new one.
    private func claimReserved() throws -> PostgresConnection {
        condition.lock()
        inUse[Lane.lock.rawValue] -= 1
        return try claimed(.lock)
    }

    private func tryReserveLock(beyondLimit: Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard beyondLimit || (inUse[Lane.lock.rawValue] < limit && lockWaiters.isEmpty) else { return false }
        inUse[Lane.lock.rawValue] += 1
        return true
    }

    /// With `condition` locked: counts a connection of `lane` and hands out an idle one or opens one (unlocked).
    private func claimed(_ lane: Lane) throws -> PostgresConnection {
        inUse[lane.rawValue] += 1
        if let connection = idle.popLast() {
            condition.unlock()
            return connection
        }
        condition.unlock()
        do {
            return try connect()
        } catch {
            closed(lane)
            throw error
        }
    }

    /// Takes `connection` back for the next user (closed instead when enough are idle).
    func giveBack(_ connection: PostgresConnection, _ lane: Lane) {
        condition.lock()
        if idle.count < limit { idle.append(connection) }  // otherwise closed when the last reference goes
        released(lane)
    }

    /// Forgets a connection that is dead or in an unknown state (closing it ends its session and so its locks).
    func discard(_ connection: PostgresConnection, _ lane: Lane) {
        closed(lane)
    }

    /// A new connection in place of `dead`, which is discarded; the slot stays taken.
    func replace(_ dead: PostgresConnection, _ lane: Lane) throws -> PostgresConnection {
        do {
            return try connect()
        } catch {
            closed(lane)
            throw error
        }
    }

    private func closed(_ lane: Lane) {
        condition.lock()
        released(lane)
    }

    /// With `condition` locked: frees a slot of `lane`, hands a lock's slot to the next waiting task, and unlocks.
    private func released(_ lane: Lane) {
        inUse[lane.rawValue] -= 1
        var next: CheckedContinuation<Void, Never>?
        if lane == .lock, inUse[lane.rawValue] < limit, !lockWaiters.isEmpty {
            next = lockWaiters.removeFirst()
            inUse[lane.rawValue] += 1
        }
        condition.broadcast()
        condition.unlock()
        next?.resume()
    }
}
