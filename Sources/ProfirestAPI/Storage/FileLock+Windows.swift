// Windows only, and minimal. On Linux the test-only target PlatformShims compiles this same file (PROFIREST_SHIMS)
// against declaration shims of WinSDK (Sources/WindowsShims); see Tests/PlatformShimsTests.
#if os(Windows) || PROFIREST_SHIMS
#if PROFIREST_SHIMS
import WindowsShims
#else
import WinSDK
#endif

/// An exclusive `LockFileEx` lock on a lock file; Windows releases it when the handle closes or the
/// process dies. `FileLock` on Windows (`acquire` is `FileLockOperations`'s, in PlatformFiles.swift).
struct WindowsFileLock {
    private let handle: HANDLE
    private let path: String

    /// The lock file opened but not locked. A new lock file is created owner-only, as on POSIX (0600): it holds no
    /// data, but another account able to open it could take the lock and stall every write.
    static func open(path: String) throws -> WindowsFileLock {
        let opened = try OwnerOnlySecurity.withAttributes(path: path, failure: .lockFailed) { attributes in
            LongPath.with(path) {
                // Each macro converted on its own: GENERIC_READ (0x80000000L) comes in as DWORD, GENERIC_WRITE
                // (0x40000000L) as Int32, and Swift has no `|` between the two.
                CreateFileW(
                    $0, GENERIC_READ | DWORD(GENERIC_WRITE),
                    DWORD(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE), &attributes, DWORD(OPEN_ALWAYS),
                    DWORD(FILE_ATTRIBUTE_NORMAL), nil)
            }
        }
        guard let handle = opened, handle != INVALID_HANDLE_VALUE else {
            throw StorageError(
                kind: .lockFailed, path: path,
                reason: "cannot open the lock file (Windows error \(GetLastError())); check the folder's permissions")
        }
        return WindowsFileLock(handle: handle, path: path)
    }

    /// Blocks until the lock is free.
    func lock() throws {
        var overlapped = OVERLAPPED()
        if !LockFileEx(handle, DWORD(LOCKFILE_EXCLUSIVE_LOCK), 0, DWORD.max, DWORD.max, &overlapped) {
            throw StorageError(
                kind: .lockFailed, path: path, reason: "cannot lock the lock file (Windows error \(GetLastError()))")
        }
    }

    /// Lets go of the lock; the handle stays open for the next `lock`.
    func unlock() {
        var overlapped = OVERLAPPED()
        _ = UnlockFileEx(handle, 0, DWORD.max, DWORD.max, &overlapped)
    }

    /// Lets go of the lock and closes the handle.
    func release() {
        unlock()
        CloseHandle(handle)
    }
}
#endif
