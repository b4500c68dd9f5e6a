import Foundation

// What the storage code (FileTokenStorage, StateStore, OutboxJournal) uses of each platform's files, stated once, so
// that every platform's implementation has this shape and a call compiled on one platform compiles on the others:
// TokenFile and FileLock in their +POSIX (Linux, Apple platforms, Android) and +Windows files, FileExtras here (no-ops)
// and in FileExtras+Apple.swift. The POSIX and no-op ones are compiled by every build here; the Windows and Apple ones
// by `make build` too, against shims, in the test-only target PlatformShims, which includes this file: one that drifts
// from these declarations fails that build.

/// Whole-file reads and crash-safe replacement of a file only its owner may read (the token file, the outbox journal).
protocol TokenFileOperations {
    /// The file's bytes, or nil when it does not exist.
    static func load(path: String) throws -> Data?
    /// Replaces the file so that readers and crashes see either the old or the new content, never a mix.
    static func replace(path: String, with data: Data, beforeRename: () -> Void, afterRename: () -> Void) throws
}

/// An exclusive lock on a lock file, across the threads and processes of this machine: each platform's primitives
/// (`flock` in FileLock+POSIX.swift, `LockFileEx` in FileLock+Windows.swift), and `acquire` over them, once.
protocol FileLockOperations {
    /// Opens the lock file (creating it) without locking it, for a holder that locks it many times.
    static func open(path: String) throws -> Self
    /// Blocks until the lock is free.
    func lock() throws
    /// Lets go of the lock, keeping the file open.
    func unlock()
    /// Lets go of the lock and closes the file.
    func release()
}

extension FileLockOperations {
    /// Opens the lock file and blocks until the lock is free; the file is closed again when the lock cannot be taken.
    static func acquire(path: String) throws -> Self {
        let lock = try open(path: path)
        do {
            try lock.lock()
        } catch {
            lock.release()
            throw error
        }
        return lock
    }
}

/// A file lock handed from the pool's thread that waited for it to the task that holds it: the lock belongs to the
/// open file (`flock`; `LockFileEx` to the handle), not to a thread, so any thread may release it.
struct HeldFileLock<Lock: FileLockOperations>: @unchecked Sendable {
    let lock: Lock
    init(_ lock: Lock) { self.lock = lock }
}

/// The lock file of this platform, as the token file, the outbox journal and their tests take it. The shims' build
/// (PROFIREST_SHIMS) type-checks the Windows one under this name and keeps `PosixFileLock` for the Apple files.
#if os(Windows) || PROFIREST_SHIMS
typealias FileLock = WindowsFileLock
#else
typealias FileLock = PosixFileLock
#endif

/// What only Apple platforms do to these files; nothing elsewhere.
protocol FileExtraOperations {
    /// Flushes the file to the medium, past the drive's cache (F_FULLFSYNC); false when that cannot be done, and the
    /// caller falls back to fsync.
    static func fullSync(_ fd: Int32) -> Bool
    /// Keeps the file out of the device's backups (iCloud, a computer's): it holds what only this device should.
    static func excludeFromBackup(path: String)
}

extension TokenFile: TokenFileOperations {}
#if os(Windows) || PROFIREST_SHIMS
extension WindowsFileLock: FileLockOperations {}
#endif
#if !os(Windows)
extension PosixFileLock: FileLockOperations {}
#endif

#if !canImport(Darwin) && !PROFIREST_SHIMS
/// Linux, Android, Windows: no full sync beyond fsync or FlushFileBuffers, no backup flag.
enum FileExtras: FileExtraOperations {
    static func fullSync(_ fd: Int32) -> Bool { false }
    static func excludeFromBackup(path: String) {}
}
#endif
