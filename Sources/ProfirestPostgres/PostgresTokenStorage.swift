import Foundation
import ProfirestAPI

/// Keeps tokens in one PostgreSQL table that every process and machine of a partner's backend shares, with a lock
/// that holds across all of them, so that replicas refresh each connection's single-use refresh token once.
///
/// **The table** (`profirest_tokens` unless you name another) has a row per storage key — the library keeps one
/// JSON document per connection there: `key text PRIMARY KEY, value text NOT NULL, updated_at timestamptz`. It is
/// created when missing. `value` is `text` rather than `jsonb` so that a document reads back byte for byte as it
/// was written, and so that a row damaged outside the library (by hand, by another program) can still be read and
/// reported: such a row throws `StorageError` (`.corrupt`) naming its key — never its content — and is left as it
/// is, never read as "not paired". For the same reason only JSON values are stored: `set` refuses any other text.
///
/// **The lock** is a PostgreSQL session-level advisory lock (`pg_advisory_lock`) on a 64-bit hash of the table
/// and the key, held by a connection of its own for the whole `withLock` body. An advisory lock rather than a row
/// lock (`SELECT … FOR UPDATE`) because a row lock lives in a transaction: the body's network call would keep a
/// transaction open, the row would have to exist before it is locked, and a write from another connection of this
/// process would wait on the lock its own body holds. An advisory lock belongs to the session instead: writes are
/// committed one by one as the body makes them, and the server releases the lock the moment the session ends —
/// when the process holding it is killed, its connection closes and another process gets the lock at once. (A
/// machine that vanishes without closing its connections keeps the lock until the server's TCP keepalive gives up:
/// see `tcp_keepalives_idle` in the server's settings.) Inside the body, `get`, `set` and `remove` of the locked
/// key go through the session that holds the lock, so they run only while the lock is held: if that session ends
/// during the body (a server restart, `pg_terminate_backend`), they throw, and `withLock` throws `StorageError`
/// (`.lockFailed`) after the body, since another process may have taken the lock meanwhile. Within this process a
/// lock per key comes first, so threads and tasks wait for it without holding a connection, and a nested `withLock`
/// on the same key throws `.reentrantLock` instead of waiting forever. `withAsyncLock` (what the library uses) waits
/// without blocking a thread: for this process's lock and a free connection suspended, for another process's lock on
/// one of a few threads the module shares — so a backend serving a thousand restaurants holds no thread per refresh.
///
/// **Connections**: libpq connections are not thread-safe, so each statement borrows one from a small pool (at
/// most `maximumConnections` open at once) and every lock holder has its own — from three quarters of the pool at
/// most, so that a read never waits for a lock held across a refresh's network call (in a process of many clients,
/// reads from async code and the refreshes they wait for would otherwise take every connection and every
/// cooperative thread between them, and stop). A task waiting for a lock's connection (`withAsyncLock`) is
/// suspended, not blocking a thread. A connection found closed by the
/// server is replaced before a statement is sent on it; when a connection is lost while a statement runs, a read is
/// retried once on a new connection, while a write — which may or may not have happened — throws
/// `StorageError` (`.unwritable`) saying so.
///
/// **libpq** is loaded at run time (Debian's and Ubuntu's package `libpq5`, `libpq.so.5`; Homebrew's `libpq` on
/// macOS), so that building the package needs neither libpq's headers nor PostgreSQL: the initializer throws a
/// `StorageError` when the library is missing. Errors never contain the password, and nothing the storage prints
/// — `description`, `dump` — contains the connection string or a stored value.
///
/// ```swift
/// let storage = try PostgresTokenStorage(connectionString: "host=db.internal dbname=partner user=partner")
/// ```
public final class PostgresTokenStorage: LockingTokenStorage, Sendable {
    /// The table the rows are in, as given (`profirest_tokens`, or a schema-qualified `tokens.profirest`).
    public let table: String
    private let target: ConnectionTarget
    private let quotedTable: String
    private let pool: ConnectionPool
    private let holders = LockHolders()

    /// The in-process side of the locks, shared by every storage of this process: a thread waits here for a key
    /// that another thread of ours holds, without taking a connection, and re-entry is seen here.
    private static let processLocks = OwnedLockTable()
    /// The few threads this module's storages share for waiting while another session holds an advisory lock (its
    /// refresh may take a network round trip): at most four at once, never a thread of the cooperative pool.
    private static let lockWaits = BlockingPool(maximumThreads: 4)

    /// Connects to PostgreSQL, creates the table when it is missing, and keeps the connection for the first calls.
    ///
    /// The connection string is libpq's: `key=value` pairs (`host=db.internal port=5432 dbname=partner
    /// user=partner password=…`) or a URI (`postgresql://partner@db.internal/partner`); libpq's environment
    /// variables (`PGPASSWORD`, …) and password file apply. Unless it says otherwise, connecting gives up after 10 s
    /// (`connect_timeout`) and TCP keepalives end a connection to a server that vanished.
    ///
    /// - Parameters:
    ///   - connectionString: where to connect and as whom; never shown by the storage or its errors.
    ///   - table: the table to keep the rows in, an unquoted identifier (letters, digits and `_`, optionally after a
    ///     schema and a dot); created when missing.
    ///   - maximumConnections: the most connections open at once, at least 2 (each `withLock` or `withAsyncLock` in
    ///     progress holds one, and at most three quarters of them, at least one fewer, are held by locks; a body
    ///     calling the storage may open one more); further calls wait for one to be free — `withAsyncLock` suspended,
    ///     the others blocking their thread.
    ///   - libraryPath: libpq to load, instead of looking for `libpq.so.5` (and macOS's names); one that cannot be
    ///     loaded throws. The first libpq a process loads is the one all its storages use.
    /// - Throws: `StorageError`: `.unreadable` when libpq cannot be loaded, the connection string cannot be
    ///   parsed, the table name is not a plain identifier, or the server cannot be reached or refuses the login;
    ///   `.unwritable` when the table is missing and cannot be created.
    ///
    /// ```swift
    /// let storage = try PostgresTokenStorage(
    ///     connectionString: ProcessInfo.processInfo.environment["DATABASE_URL"] ?? "dbname=partner")
    /// ```
    public init(
        connectionString: String, table: String = "profirest_tokens", maximumConnections: Int = 8,
        libraryPath: String? = nil
    ) throws {
        self.table = table
        let place = "PostgreSQL, table \(table)"
        guard let quoted = Self.quoted(table) else {
            throw StorageError(
                kind: .unreadable, path: place,
                reason: "the table name is not a plain identifier: use letters, digits and _ (and schema.table)")
        }
        quotedTable = quoted
        do {
            _ = try LibPQ.load(path: libraryPath)
        } catch let failure as LibPQ.LoadFailure {
            throw StorageError(
                kind: .unreadable, path: place,
                reason: "\(failure.message); install libpq (Debian and Ubuntu: apt-get install libpq5; macOS: brew "
                    + "install libpq) or pass its path as libraryPath")
        }
        guard let target = ConnectionTarget(connectionString: connectionString) else {
            throw StorageError(
                kind: .unreadable, path: place,
                reason: "the connection string cannot be parsed: use key=value pairs (host=… dbname=… user=…) or a "
                    + "postgresql:// URI (it is not repeated here, since it may hold a password)")
        }
        self.target = target
        pool = ConnectionPool(limit: maximumConnections) {
            try PostgresConnection.open(keywords: target.keywords, values: target.values)
        }
        let connection = try take(kind: .unreadable, key: nil)
        do {
            try createTableIfMissing(connection)
            pool.giveBack(connection)
        } catch let failure as QueryFailure {
            pool.discard(connection)
            throw error(
                .unwritable, key: nil, failure,
                doing: "the table is missing and cannot be created (create it yourself: CREATE TABLE \(table) "
                    + "(key text PRIMARY KEY, value text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now()))")
        }
    }

    // MARK: TokenStorage

    /// Reads the value stored under `key`, afresh from the table, so that another process's write is seen at once.
    ///
    /// - Parameter key: the storage key, such as `profirest-api:profirest-pos`.
    /// - Returns: the stored value, or nil when the table has no row for `key`.
    /// - Throws: `StorageError`: `.corrupt` when the row's value is not JSON (it is left as it is), `.unreadable`
    ///   when the server cannot be reached or refuses the statement; inside `withLock` for `key`, `.lockFailed` when
    ///   the session holding the lock has ended.
    public func get(_ key: String) throws -> String? {
        try check(key, kind: .unreadable)
        let rows = try run(
            "SELECT value FROM \(quotedTable) WHERE key = $1", [key], key: key, kind: .unreadable, write: false)
        guard let row = rows.first else { return nil }
        guard let value = row, Self.isJSON(value) else {
            throw StorageError(
                kind: .corrupt, path: location(key),
                reason: "the stored value is not valid JSON, so it was changed by something other than ProfirestAPI; "
                    + "fix the row or delete it (deleting it forgets the connection, which must then be paired again)")
        }
        return value
    }

    /// Stores `value` under `key` (inserted or replaced, in one statement committed at once), so that the next `get`
    /// of any process sees it.
    ///
    /// - Parameters:
    ///   - key: the storage key, such as `profirest-api:profirest-pos`.
    ///   - value: a JSON document (what the library stores); other text is refused.
    /// - Throws: `StorageError`: `.unwritable` when `value` is not JSON or the server refuses the statement
    ///   (nothing was written then), or when the connection was lost while the statement ran (the message says
    ///   that the value may or may not have been written); inside `withLock` for `key`, `.lockFailed` when the
    ///   session holding the lock had already ended (nothing was written).
    public func set(_ key: String, _ value: String) throws {
        try check(key, kind: .unwritable)
        guard Self.isJSON(value) else {
            throw StorageError(
                kind: .unwritable, path: location(key),
                reason: "the value is not a JSON document; PostgresTokenStorage stores JSON only (the library's state "
                    + "documents), so nothing was written")
        }
        _ = try run(
            "INSERT INTO \(quotedTable) (key, value, updated_at) VALUES ($1, $2, now()) "
                + "ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            [key, value], key: key, kind: .unwritable, write: true)
    }

    /// Deletes the row of `key`, for unpairing; deleting a key that is not there is not an error.
    ///
    /// - Parameter key: the storage key, such as `profirest-api:profirest-pos`.
    /// - Throws: `StorageError` (`.unwritable`, or `.lockFailed` as for ``set(_:_:)``).
    public func remove(_ key: String) throws {
        try check(key, kind: .unwritable)
        _ = try run("DELETE FROM \(quotedTable) WHERE key = $1", [key], key: key, kind: .unwritable, write: true)
    }

    // MARK: LockingTokenStorage

    /// Runs `body` while holding `key`'s advisory lock, which keeps out every thread and process using this table,
    /// on this machine or another; waits as long as another holder keeps it.
    ///
    /// `get`, `set` and `remove` of `key` inside `body` run on the session that holds the lock. The lock is not
    /// re-entrant: a nested call for the same key on the same thread throws `.reentrantLock`.
    ///
    /// - Parameters:
    ///   - key: the storage key the lock is for.
    ///   - body: the work to do under the lock; `get`, `set` and `remove` may be called inside it.
    /// - Returns: what `body` returns.
    /// - Throws: `StorageError`: `.reentrantLock` when this thread already holds `key`'s lock; `.lockFailed` when
    ///   the lock cannot be taken (the server cannot be reached or refuses) or when the session holding it ended
    ///   before the body did (another process may have held the lock meanwhile; what the body wrote before that
    ///   stays written) — this error then replaces the body's; otherwise whatever `body` throws.
    public func withLock<T>(_ key: String, _ body: () throws -> T) throws -> T {
        let local = try unheldLocal(key)
        local.acquire()
        defer { local.release() }
        let holder = try lock(key)
        holders.push(holder)
        let outcome = Result { try body() }
        holders.pop(holder)
        unlock(holder)
        if holder.lost { throw lostLock(key) }
        return try outcome.get()
    }

    /// Runs `body` while holding `key`'s advisory lock, like ``withLock(_:_:)``, without blocking the calling thread,
    /// so that a backend serving many connections holds no thread per refresh.
    ///
    /// The task waits suspended for the other threads and tasks of this process and for a free connection; the
    /// lock itself is tried at once, and only while another process holds it is it waited for on one of a few threads
    /// this module shares for that. `get`, `set` and `remove` of `key` inside `body` (and in tasks it starts) run on
    /// the session that holds the lock.
    ///
    /// - Parameters:
    ///   - key: the storage key the lock is for.
    ///   - body: the work to do under the lock; `get`, `set` and `remove` may be called inside it.
    /// - Returns: what `body` returns.
    /// - Throws: `StorageError`: `.reentrantLock` when the calling task or thread already holds `key`'s lock;
    ///   `.lockFailed` when the lock cannot be taken or the session holding it ended before the body did (as for
    ///   ``withLock(_:_:)``); otherwise whatever `body` throws.
    public func withAsyncLock<T: Sendable>(_ key: String, _ body: @Sendable () async throws -> T) async throws -> T {
        try await unheldLocal(key).withAsyncLock {
            let holder = try await lockAsync(key)
            let outcome: Result<T, Error>
            do {
                outcome = .success(try await LockHolder.$ofTask.withValue(LockHolder.ofTask + [holder]) { try await body() })
            } catch {
                outcome = .failure(error)
            }
            unlock(holder)
            if holder.lost { throw lostLock(key) }
            return try outcome.get()
        }
    }

    /// This process's lock of `key` (before the advisory lock, so that threads and tasks wait here without holding a
    /// connection), checked not to be the caller's already.
    private func unheldLocal(_ key: String) throws -> OwnedLock {
        try check(key, kind: .lockFailed)
        return try Self.processLocks.unheldLock(
            "\(target.summary)\u{0}\(table)\u{0}\(key)", key: key, path: location(key), scope: "key")
    }

    private func lostLock(_ key: String) -> StorageError {
        StorageError(
            kind: .lockFailed, path: location(key),
            reason: "the connection holding the lock was lost before the body ended, so the lock was released "
                + "early and another process may have held it meanwhile; what the body wrote before that stays "
                + "written — read the key again and retry")
    }

    // MARK: Statements

    /// Runs one statement for `key`: on the session holding `key`'s lock when this thread holds it, otherwise on a
    /// pooled connection, replacing one found dead before sending, and retrying a read once when the connection is
    /// lost while it runs.
    private func run(_ sql: String, _ parameters: [String], key: String, kind: StorageError.Kind, write: Bool) throws
        -> [String?]
    {
        if let holder = holders.holder(of: key) {
            return try run(sql, parameters, holding: holder, kind: kind, write: write)
        }
        var connection = try take(kind: kind, key: key)
        for attempt in 0..<2 {
            if connection.isKnownDead { connection = try replace(connection, kind: kind, key: key) }
            switch connection.execute(sql, parameters) {
            case .success(let rows):
                pool.giveBack(connection)
                return rows
            case .failure(let failure) where !failure.connectionLost:
                pool.giveBack(connection)
                throw error(kind, key: key, failure)
            case .failure(let failure) where write || attempt == 1:
                pool.discard(connection)
                throw write ? lostWhileWriting(key, failure) : error(kind, key: key, failure)
            case .failure:
                connection = try replace(connection, kind: kind, key: key)
            }
        }
        preconditionFailure("the loop above returns or throws")
    }

    /// A statement inside `withLock` for its key, on the lock's session; never on another one, since only that
    /// session holds the lock.
    private func run(
        _ sql: String, _ parameters: [String], holding holder: LockHolder, kind: StorageError.Kind, write: Bool
    ) throws -> [String?] {
        if !holder.lost && holder.connection.isKnownDead { holder.lost = true }
        guard !holder.lost else {
            throw StorageError(
                kind: .lockFailed, path: location(holder.key),
                reason: "the connection holding the lock has ended, so the lock is gone and another process may hold "
                    + "it; nothing was \(write ? "written" : "read")")
        }
        switch holder.execute(sql, parameters) {
        case .success(let rows):
            return rows
        case .failure(let failure) where failure.connectionLost:
            holder.lost = true
            if write { throw lostWhileWriting(holder.key, failure) }
            throw error(.lockFailed, key: holder.key, failure, doing: "the connection holding the lock was lost")
        case .failure(let failure):
            throw error(kind, key: holder.key, failure)
        }
    }

    /// Takes `key`'s advisory lock on a connection of its own; a connection lost while waiting is replaced once
    /// (a lost session holds no lock, so asking again is safe).
    private func lock(_ key: String) throws -> LockHolder {
        let id = Self.lockID(table: table, key: key)
        var connection = try take(kind: .lockFailed, key: key, forLock: true)
        for attempt in 0..<2 {
            if connection.isKnownDead { connection = try replace(connection, kind: .lockFailed, key: key, forLock: true) }
            let outcome = connection.execute("SELECT pg_advisory_lock($1::bigint)", [String(id)])
            if let holder = try held(outcome, on: &connection, attempt: attempt, key: key, id: id) { return holder }
        }
        preconditionFailure("the loop above returns or throws")
    }

    /// `lock(_:)` for an async body: the connection is waited for suspended, the lock is tried at once
    /// (`pg_try_advisory_lock`: it is almost always free), and only while another session holds it is it waited for,
    /// on one of this module's few shared threads (`lockWaits`) — never on a thread of the cooperative pool.
    private func lockAsync(_ key: String) async throws -> LockHolder {
        let id = Self.lockID(table: table, key: key)
        var connection: PostgresConnection
        do {
            connection = try await pool.takeLock(beyondLimit: holders.callerHoldsAny)
        } catch let failure as QueryFailure {
            throw cannotConnect(.lockFailed, key: key, failure)
        }
        for attempt in 0..<2 {
            if connection.isKnownDead { connection = try replace(connection, kind: .lockFailed, key: key, forLock: true) }
            var outcome = connection.execute("SELECT pg_try_advisory_lock($1::bigint)", [String(id)])
            if case .success(let rows) = outcome, rows.first != "t" {
                let waiting = connection
                outcome = try await Self.lockWaits.run {
                    waiting.execute("SELECT pg_advisory_lock($1::bigint)", [String(id)])
                }
            }
            if let holder = try held(outcome, on: &connection, attempt: attempt, key: key, id: id) { return holder }
        }
        preconditionFailure("the loop above returns or throws")
    }

    /// What one try at `key`'s advisory lock came to, for `lock` and `lockAsync`: the holder once the lock is held;
    /// nil when the session was lost on the first try and `connection` is a new one to try again on (a lost session
    /// holds no lock); otherwise the connection goes back (or away) and the failure is thrown.
    private func held(
        _ outcome: Result<[String?], QueryFailure>, on connection: inout PostgresConnection, attempt: Int, key: String,
        id: Int64
    ) throws -> LockHolder? {
        switch outcome {
        case .success:
            return LockHolder(key: key, lockID: id, connection: connection, owner: holders.owner)
        case .failure(let failure) where failure.connectionLost && attempt == 0:
            connection = try replace(connection, kind: .lockFailed, key: key, forLock: true)
            return nil
        case .failure(let failure):
            if failure.connectionLost { pool.discard(connection, forLock: true) } else { pool.giveBack(connection, forLock: true) }
            throw error(.lockFailed, key: key, failure, doing: "the lock cannot be taken")
        }
    }

    /// Releases the lock and gives its connection back; a connection that cannot say it released the lock is
    /// closed instead, which ends its session and so releases the lock too.
    private func unlock(_ holder: LockHolder) {
        holder.markReleased()
        guard !holder.lost else {
            pool.discard(holder.connection, forLock: true)
            return
        }
        switch holder.execute("SELECT pg_advisory_unlock($1::bigint)", [String(holder.lockID)]) {
        case .success(let rows) where rows.first == "t":
            pool.giveBack(holder.connection, forLock: true)
        case .success:
            // The session did not hold the lock: it cannot have kept it all along.
            holder.lost = true
            pool.discard(holder.connection, forLock: true)
        case .failure(let failure):
            if failure.connectionLost { holder.lost = true }
            pool.discard(holder.connection, forLock: true)
        }
    }

    private func take(kind: StorageError.Kind, key: String?, forLock: Bool = false) throws -> PostgresConnection {
        do {
            return try pool.take(beyondLimit: holders.callerHoldsAny, forLock: forLock)
        } catch let failure as QueryFailure {
            throw cannotConnect(kind, key: key, failure)
        }
    }

    private func replace(_ dead: PostgresConnection, kind: StorageError.Kind, key: String?, forLock: Bool = false) throws
        -> PostgresConnection
    {
        do {
            return try pool.replace(dead, forLock: forLock)
        } catch let failure as QueryFailure {
            throw cannotConnect(kind, key: key, failure)
        }
    }

    private func createTableIfMissing(_ connection: PostgresConnection) throws {
        if case .success(let rows) = connection.execute("SELECT to_regclass($1)::text", [quotedTable]),
            rows.first.map({ $0 != nil }) == true
        {
            return
        }
        // Two processes creating the table at once could both fail on the catalog's unique index: one at a time.
        let steps = [
            ("BEGIN", []),
            ("SELECT pg_advisory_xact_lock($1::bigint)", [String(Self.lockID(table: table, key: "\u{0}create"))]),
            ("CREATE TABLE IF NOT EXISTS \(quotedTable) (key text PRIMARY KEY, value text NOT NULL, "
                + "updated_at timestamptz NOT NULL DEFAULT now())", []),
            ("COMMIT", []),
        ]
        for (sql, parameters) in steps {
            if case .failure(let failure) = connection.execute(sql, parameters) {
                _ = connection.execute("ROLLBACK")
                throw failure
            }
        }
    }

    // MARK: Errors

    /// Where an error is: the server (never the password), the table and the key.
    private func location(_ key: String?) -> String {
        "\(target.summary), table \(table)" + (key.map { ", key \($0)" } ?? "")
    }

    private func error(
        _ kind: StorageError.Kind, key: String?, _ failure: QueryFailure, doing context: String? = nil
    ) -> StorageError {
        StorageError(
            kind: kind, path: location(key),
            reason: [context, "PostgreSQL said: \(explanation(failure))"].compactMap { $0 }.joined(separator: "; "))
    }

    private func cannotConnect(_ kind: StorageError.Kind, key: String?, _ failure: QueryFailure) -> StorageError {
        StorageError(
            kind: kind, path: location(key),
            reason: "cannot connect to PostgreSQL: \(target.redact(failure.message)); check the connection string, "
                + "the server and the password")
    }

    private func lostWhileWriting(_ key: String, _ failure: QueryFailure) -> StorageError {
        StorageError(
            kind: .unwritable, path: location(key),
            reason: "the connection to PostgreSQL was lost while writing (\(target.redact(failure.message))), so the "
                + "change may or may not have been made; read the key again before relying on it")
    }

    /// The server's message with its SQLSTATE. A data exception's message (class 22: an encoding that cannot hold a
    /// character, a value too long) may quote the value, which is a secret: only its SQLSTATE is given.
    private func explanation(_ failure: QueryFailure) -> String {
        guard let state = failure.sqlState else { return target.redact(failure.message) }
        if state.hasPrefix("22") {
            return "the value was refused (SQLSTATE \(state); a UTF8 database is needed for any text)"
        }
        return "\(target.redact(failure.message)) (SQLSTATE \(state))"
    }

    private func check(_ key: String, kind: StorageError.Kind) throws {
        if key.utf8.contains(0) {
            throw StorageError(kind: kind, path: location(nil), reason: "a storage key cannot contain a NUL character")
        }
    }

    // MARK: Helpers

    private static func isJSON(_ text: String) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil
    }

    /// `table` double-quoted for SQL (`"schema"."name"`), or nil when it is not one or two plain identifiers.
    private static func quoted(_ table: String) -> String? {
        let parts = table.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return nil }
        func letter(_ c: Unicode.Scalar) -> Bool { c == "_" || ("a"..."z").contains(c) || ("A"..."Z").contains(c) }
        for part in parts {
            guard let first = part.unicodeScalars.first, letter(first), part.utf8.count <= 63,
                part.unicodeScalars.allSatisfy({ letter($0) || ("0"..."9").contains($0) })
            else { return nil }
        }
        return parts.map { "\"\($0)\"" }.joined(separator: ".")
    }

    /// The advisory lock's 64-bit key: FNV-1a of the table and the storage key, the same in every process (Swift's
    /// `Hasher` is seeded per process). Another application's advisory lock on the same number is as unlikely as a
    /// 64-bit collision, and would only make the two wait for each other.
    static func lockID(table: String, key: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "profirest-token-lock\u{0}\(table)\u{0}\(key)".utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }
}

extension PostgresTokenStorage: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The server (user, host, port, database) and the table, never the password or a stored value.
    public var description: String { "PostgresTokenStorage(\(target.summary), table: \(table))" }

    /// The same as `description`: a debugger sees no more.
    public var debugDescription: String { description }

    /// Shows `dump` and debuggers the server and the table only, never the connection string or a stored value.
    public var customMirror: Mirror {
        Mirror(self, children: ["server": target.summary, "table": table], displayStyle: .class)
    }
}
