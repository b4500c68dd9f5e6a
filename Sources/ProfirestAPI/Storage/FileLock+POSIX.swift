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
/// crashed process never leaves the lock stuck.
struct FileLock {
    private let descriptor: Int32

    /// Blocks until the lock is free.
    static func acquire(path: String) throws -> FileLock {
        // O_CLOEXEC: a child process inheriting the descriptor would keep the lock after we release it.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StorageError(
                kind: .lockFailed, path: path,
                reason: "cannot open the lock file (\(errnoDescription(errno))); check the directory's permissions")
        }
        // The mode given to open only applies when creating; a lock file left by an older tool may be wider.
        _ = fchmod(fd, 0o600)
        while flock(fd, LOCK_EX) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(fd)
            throw StorageError(
                kind: .lockFailed, path: path,
                reason: "cannot lock the lock file (\(errnoDescription(code))); the file system may not support flock")
        }
        return FileLock(descriptor: fd)
    }

    func release() {
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

func errnoDescription(_ code: Int32) -> String {
    String(cString: strerror(code))
}
#endif
