#if !os(Windows)
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// An exclusive `flock` on a lock file. The kernel drops it when the holder exits or is killed, so a
/// crashed process never leaves the lock stuck. `FileLock` on every platform but Windows, and on Apple platforms also
/// the keychain storage's lock across processes (`acquire` is `FileLockOperations`'s, in PlatformFiles.swift).
struct PosixFileLock {
    private let descriptor: Int32
    private let path: String

    /// The lock file opened (created owner-only when missing) but not locked.
    static func open(path: String) throws -> PosixFileLock {
        // O_CLOEXEC: a child process inheriting the descriptor would keep the lock after we release it.
        let fd = systemOpen(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StorageError(
                kind: .lockFailed, path: path,
                reason: "cannot open the lock file (\(errnoDescription(errno))); check the directory's permissions")
        }
        // The mode given to open only applies when creating; a lock file left by an older tool may be wider.
        _ = fchmod(fd, 0o600)
        return PosixFileLock(descriptor: fd, path: path)
    }

    /// Blocks until the lock is free.
    func lock() throws {
        while flock(descriptor, LOCK_EX) != 0 {
            let code = errno
            if code == EINTR { continue }
            throw StorageError(
                kind: .lockFailed, path: path,
                reason: "cannot lock the lock file (\(errnoDescription(code))); the file system may not support flock")
        }
    }

    /// Lets go of the lock; the file stays open for the next `lock`.
    func unlock() {
        _ = flock(descriptor, LOCK_UN)
    }

    /// Lets go of the lock and closes the file.
    func release() {
        unlock()
        close(descriptor)
    }
}

/// `open(2)`, named apart from `PosixFileLock.open(path:)`.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}

func errnoDescription(_ code: Int32) -> String {
    String(cString: strerror(code))
}
#endif
