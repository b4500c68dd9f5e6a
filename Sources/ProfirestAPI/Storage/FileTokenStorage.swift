import Foundation

/// Keeps tokens in one JSON file (`{"key": "value", …}`), readable by the owner only (mode 0600; on Windows an ACL
/// that lets in the process's user alone), so a command-line tool or daemon stays paired across restarts. Several keys — and several processes — can share a file.
///
/// Writes replace the file atomically (temporary file, fsync, rename, fsync of the directory), so a crash
/// never leaves a half-written file. `withLock` takes an exclusive lock on `<path>.lock` that excludes
/// other threads and other processes; it covers the whole file, whatever the key. `withAsyncLock` takes the same lock
/// without blocking the caller's thread (the wait for another process runs on a small pool of threads the process
/// shares). A file that cannot be
/// parsed throws `StorageError` rather than being treated as empty, which would silently forget the pairing.
///
/// ```swift
/// let storage = FileTokenStorage(path: "/var/lib/pichacka/tokens.json")
/// ```
public final class FileTokenStorage: LockingTokenStorage {
    /// The token file, made absolute when the storage was created, so that a later change of the working directory
    /// does not move it.
    public let path: String
    private let lockPath: String

    /// In-process side of the lock, shared by every `FileTokenStorage` of one file: flock alone is
    /// per open file description and says nothing about which thread of ours holds it.
    private static let processLocks = OwnedLockTable()

    /// Makes a storage backed by the file at `path`; nothing is touched until first use, and a missing file simply
    /// holds no values yet.
    ///
    /// - Parameter path: the token file; a relative path is made absolute against the current directory now.
    ///
    /// ```swift
    /// let storage = FileTokenStorage(path: "/var/lib/pichacka/tokens.json")
    /// ```
    public init(path: String) {
        self.path = URL(fileURLWithPath: path).standardizedFileURL.path
        self.lockPath = self.path + ".lock"
    }

    /// Reads the value under `key` from the file afresh on every call, so that a value another process wrote is
    /// seen at once; a file that cannot be parsed throws ``StorageError`` (`.corrupt`).
    ///
    /// - Parameter key: the storage key, such as `profirest-api:profirest-pos`.
    /// - Returns: the value under `key`, or nil when the file or the key is missing.
    /// - Throws: ``StorageError`` when the file cannot be read (`.unreadable`) or parsed (`.corrupt`).
    public func get(_ key: String) throws -> String? {
        try readAll()[key]
    }

    /// Writes `value` under `key` by replacing the whole file atomically, under the lock, keeping the other keys.
    ///
    /// - Parameters:
    ///   - key: the storage key, such as `profirest-api:profirest-pos`.
    ///   - value: the text to store.
    /// - Throws: ``StorageError`` when the file cannot be read (`.unreadable`), parsed (`.corrupt`), locked
    ///   (`.lockFailed`) or written (`.unwritable`); the file is unchanged then.
    public func set(_ key: String, _ value: String) throws {
        try update { $0[key] = value }
    }

    /// Removes `key` from the file the same way, atomically and under the lock.
    ///
    /// - Parameter key: the storage key, such as `profirest-api:profirest-pos`.
    /// - Throws: ``StorageError`` when the file cannot be read (`.unreadable`), parsed (`.corrupt`), locked
    ///   (`.lockFailed`) or written (`.unwritable`); the file is unchanged then.
    public func remove(_ key: String) throws {
        try update { $0[key] = nil }
    }

    /// Runs `body` holding the lock on `<path>.lock`, which keeps out other threads and other processes, so that
    /// they refresh a token one after another; `get`, `set` and `remove` work inside it.
    ///
    /// The lock covers the whole file, whatever the key. It is not re-entrant: a nested call on the same thread
    /// throws `StorageError` (`.reentrantLock`).
    ///
    /// - Parameters:
    ///   - key: the storage key the lock is for.
    ///   - body: the work to do under the lock; `get`, `set` and `remove` may be called inside it.
    /// - Returns: what `body` returns.
    /// - Throws: ``StorageError`` when the lock file cannot be made or locked (`.unwritable`, `.lockFailed`) or this
    ///   thread already holds the lock (`.reentrantLock`), and whatever `body` throws.
    public func withLock<T>(_ key: String, _ body: () throws -> T) throws -> T {
        try locked(try unheldLock(key), body)
    }

    /// Runs `body` holding the same lock as ``withLock(_:_:)``, without blocking the calling thread: the task waits
    /// for the other threads of this process suspended, and for another process's lock on one of the few threads the
    /// process shares for such waits, so a refresh never parks a thread of the cooperative pool.
    ///
    /// - Parameters:
    ///   - key: the storage key the lock is for (the lock covers the whole file, whatever the key).
    ///   - body: the work to do under the lock; `get`, `set` and `remove` may be called inside it.
    /// - Returns: what `body` returns.
    /// - Throws: ``StorageError`` when the lock file cannot be made or locked (`.unwritable`, `.lockFailed`) or the
    ///   calling task already holds the lock (`.reentrantLock`), and whatever `body` throws.
    public func withAsyncLock<T: Sendable>(_ key: String, _ body: @Sendable () async throws -> T) async throws -> T {
        try await unheldLock(key).withAsyncLock {
            try ensureDirectory()
            let lockPath = self.lockPath
            let fileLock = try await BlockingPool.shared.run { HeldFileLock(try FileLock.acquire(path: lockPath)) }
            defer { fileLock.lock.release() }
            return try await body()
        }
    }

    private func unheldLock(_ key: String) throws -> OwnedLock {
        try Self.processLocks.unheldLock(path, key: key, path: path, scope: "file")
    }

    private func locked<T>(_ processLock: OwnedLock, _ body: () throws -> T) throws -> T {
        processLock.acquire()
        defer { processLock.release() }
        try ensureDirectory()
        let fileLock = try FileLock.acquire(path: lockPath)
        defer { fileLock.release() }
        return try body()
    }

    /// Read-modify-write under the lock; inside `withLock` the lock is already ours and is not taken again.
    private func update(_ change: (inout [String: String]) -> Void) throws {
        let processLock = Self.processLocks.lock(for: path)
        if processLock.isHeldByCaller {
            try readChangeWrite(change)
        } else {
            try locked(processLock) { try readChangeWrite(change) }
        }
    }

    private func readChangeWrite(_ change: (inout [String: String]) -> Void) throws {
        var values = try readAll()
        change(&values)
        try writeAll(values)
    }

    private func readAll() throws -> [String: String] {
        guard let data = try TokenFile.load(path: path) else { return [:] }
        // The decoder's own error text may quote the file, which holds secrets: report only the fact.
        guard let values = try? JSONDecoder().decode([String: String].self, from: data) else {
            throw StorageError(
                kind: .corrupt, path: path,
                reason: "the token file is not a JSON object of strings; fix or delete it "
                    + "(deleting it forgets the pairing)")
        }
        return values
    }

    private func writeAll(_ values: [String: String]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(values)
        data.append(UInt8(ascii: "\n"))
        try TokenFile.replace(path: path, with: data)
    }

    private func ensureDirectory() throws {
        let directory = (path as NSString).deletingLastPathComponent
        guard !FileManager.default.fileExists(atPath: directory) else { return }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StorageError(
                kind: .unwritable, path: path,
                reason: "cannot create the directory \(directory) for the token file; create it or choose another path")
        }
    }
}
