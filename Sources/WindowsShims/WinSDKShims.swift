// Test-only declaration shims of exactly the WinSDK API that Sources/ProfirestAPI/Storage/FileLock+Windows.swift uses,
// so that file is type-checked and its logic tested on Linux (target PlatformShims, condition PROFIREST_SHIMS). Never
// part of the ProfirestAPI library or any product.
//
// Each C declaration is cited from its learn.microsoft.com page; the Swift spelling is how Swift imports it on
// Windows: DWORD = UInt32 (C `unsigned long` is 32-bit there), pointer parameters implicitly unwrapped, and `BOOL`
// results bridged to Swift `Bool` (the WindowsBool bridging and `INVALID_HANDLE_VALUE` are in Swift's WinSDK overlay,
// https://github.com/swiftlang/swift/blob/main/stdlib/public/Windows/WinSDK.swift). NOT confirmed: the Swift type of
// the flag macros (GENERIC_READ, FILE_SHARE_*, OPEN_ALWAYS, …). They are declared `Int` here; real Swift-on-Windows
// code converts them with `DWORD(…)` exactly as the library does, which type-checks for any integer type.
//
// Behaviour (backed by the real file system of this machine plus an in-process byte-range-free lock table):
// CreateFileW with OPEN_ALWAYS opens or creates the file, failing with ERROR_PATH_NOT_FOUND when the folder is
// missing; LockFileEx with LOCKFILE_EXCLUSIVE_LOCK (and without LOCKFILE_FAIL_IMMEDIATELY) waits until no other handle
// holds the file's lock; UnlockFileEx releases it (ERROR_NOT_LOCKED when not held); CloseHandle releases what the
// handle still holds. Only whole-file exclusive locks, as the library takes them, are modelled.
import Foundation

/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef unsigned long DWORD;`
public typealias DWORD = UInt32
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef PVOID HANDLE;`
public typealias HANDLE = UnsafeMutableRawPointer
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef wchar_t WCHAR;` (16-bit)
public typealias WCHAR = UInt16
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef CONST WCHAR *LPCWSTR;`
public typealias LPCWSTR = UnsafePointer<WCHAR>

/// https://learn.microsoft.com/en-us/windows/win32/api/minwinbase/ns-minwinbase-overlapped — fields reduced to
/// what a zero-initialised OVERLAPPED for offset 0 needs (the real one has a union of Offset/OffsetHigh and Pointer).
public struct OVERLAPPED {
    public var Internal: UInt = 0
    public var InternalHigh: UInt = 0
    public var Offset: DWORD = 0
    public var OffsetHigh: DWORD = 0
    public var hEvent: HANDLE? = nil
    public init() {}
}
/// https://learn.microsoft.com/en-us/windows/win32/api/minwinbase/ns-minwinbase-overlapped — `LPOVERLAPPED`
public typealias LPOVERLAPPED = UnsafeMutablePointer<OVERLAPPED>
/// https://learn.microsoft.com/en-us/windows/win32/api/wtypesbase/ns-wtypesbase-security_attributes (opaque here;
/// the library passes nil)
public struct SECURITY_ATTRIBUTES {
    public init() {}
}
public typealias LPSECURITY_ATTRIBUTES = UnsafeMutablePointer<SECURITY_ATTRIBUTES>

/// https://learn.microsoft.com/en-us/windows/win32/secauthz/generic-access-rights — `GENERIC_READ (0x80000000L)`
public var GENERIC_READ: Int { 0x8000_0000 }
/// https://learn.microsoft.com/en-us/windows/win32/secauthz/generic-access-rights — `GENERIC_WRITE (0x40000000L)`
public var GENERIC_WRITE: Int { 0x4000_0000 }
/// https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-createfilew — dwShareMode values
public var FILE_SHARE_READ: Int { 0x1 }
public var FILE_SHARE_WRITE: Int { 0x2 }
public var FILE_SHARE_DELETE: Int { 0x4 }
/// https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-createfilew — dwCreationDisposition
public var OPEN_ALWAYS: Int { 4 }
/// https://learn.microsoft.com/en-us/windows/win32/fileio/file-attribute-constants — `FILE_ATTRIBUTE_NORMAL 128 (0x80)`
public var FILE_ATTRIBUTE_NORMAL: Int { 0x80 }
/// https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-lockfileex — dwFlags values
public var LOCKFILE_FAIL_IMMEDIATELY: Int { 0x1 }
public var LOCKFILE_EXCLUSIVE_LOCK: Int { 0x2 }
/// Swift's WinSDK overlay: `public var INVALID_HANDLE_VALUE: HANDLE { HANDLE(bitPattern: -1)! }`
public var INVALID_HANDLE_VALUE: HANDLE { HANDLE(bitPattern: -1)! }

/// https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes--0-499-
public var ERROR_PATH_NOT_FOUND: DWORD { 3 }
public var ERROR_INVALID_HANDLE: DWORD { 6 }
public var ERROR_LOCK_VIOLATION: DWORD { 33 }
public var ERROR_NOT_LOCKED: DWORD { 158 }

/// https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-createfilew —
/// `HANDLE CreateFileW(LPCWSTR lpFileName, DWORD dwDesiredAccess, DWORD dwShareMode,
/// LPSECURITY_ATTRIBUTES lpSecurityAttributes, DWORD dwCreationDisposition, DWORD dwFlagsAndAttributes,
/// HANDLE hTemplateFile);` Only OPEN_ALWAYS is modelled.
public func CreateFileW(
    _ lpFileName: LPCWSTR!, _ dwDesiredAccess: DWORD, _ dwShareMode: DWORD,
    _ lpSecurityAttributes: LPSECURITY_ATTRIBUTES!, _ dwCreationDisposition: DWORD, _ dwFlagsAndAttributes: DWORD,
    _ hTemplateFile: HANDLE!
) -> HANDLE! {
    precondition(dwCreationDisposition == DWORD(OPEN_ALWAYS), "the WinSDK shim models OPEN_ALWAYS only")
    var length = 0
    while lpFileName[length] != 0 { length += 1 }
    let path = String(decoding: UnsafeBufferPointer(start: lpFileName, count: length), as: UTF16.self)
    return WindowsFiles.shared.open(path)
}

/// https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-lockfileex —
/// `BOOL LockFileEx(HANDLE hFile, DWORD dwFlags, DWORD dwReserved, DWORD nNumberOfBytesToLockLow,
/// DWORD nNumberOfBytesToLockHigh, LPOVERLAPPED lpOverlapped);`
@discardableResult
public func LockFileEx(
    _ hFile: HANDLE!, _ dwFlags: DWORD, _ dwReserved: DWORD, _ nNumberOfBytesToLockLow: DWORD,
    _ nNumberOfBytesToLockHigh: DWORD, _ lpOverlapped: LPOVERLAPPED!
) -> Bool {
    precondition(dwFlags & DWORD(LOCKFILE_EXCLUSIVE_LOCK) != 0, "the WinSDK shim models exclusive locks only")
    return WindowsFiles.shared.lock(hFile, failImmediately: dwFlags & DWORD(LOCKFILE_FAIL_IMMEDIATELY) != 0)
}

/// https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-unlockfileex —
/// `BOOL UnlockFileEx(HANDLE hFile, DWORD dwReserved, DWORD nNumberOfBytesToUnlockLow,
/// DWORD nNumberOfBytesToUnlockHigh, LPOVERLAPPED lpOverlapped);`
@discardableResult
public func UnlockFileEx(
    _ hFile: HANDLE!, _ dwReserved: DWORD, _ nNumberOfBytesToUnlockLow: DWORD, _ nNumberOfBytesToUnlockHigh: DWORD,
    _ lpOverlapped: LPOVERLAPPED!
) -> Bool {
    WindowsFiles.shared.unlock(hFile)
}

/// https://learn.microsoft.com/en-us/windows/win32/api/handleapi/nf-handleapi-closehandle —
/// `BOOL CloseHandle(HANDLE hObject);`
@discardableResult
public func CloseHandle(_ hObject: HANDLE!) -> Bool {
    WindowsFiles.shared.close(hObject)
}

/// https://learn.microsoft.com/en-us/windows/win32/api/errhandlingapi/nf-errhandlingapi-getlasterror —
/// `DWORD GetLastError();` (per thread)
public func GetLastError() -> DWORD {
    (Thread.current.threadDictionary["WindowsShims.lastError"] as? DWORD) ?? 0
}

func setLastError(_ code: DWORD) {
    Thread.current.threadDictionary["WindowsShims.lastError"] = code
}

/// The handles and locks behind the WinSDK shims, for the process. Usage: `WindowsFiles.shared.openHandles`
public final class WindowsFiles: @unchecked Sendable {
    /// The process's table. Usage: `WindowsFiles.shared.openHandles`
    public static let shared = WindowsFiles()

    private let condition = NSCondition()
    private var next = 0x1000
    private var paths: [Int: String] = [:]
    private var holders: [String: Int] = [:]

    /// How many handles are open (not yet closed), for tests checking that nothing leaks.
    public var openHandles: Int { condition.withLock { paths.count } }

    func open(_ path: String) -> HANDLE? {
        let folder = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.isEmpty ? "." : folder, isDirectory: &isDirectory),
            isDirectory.boolValue
        else {
            setLastError(ERROR_PATH_NOT_FOUND)
            return INVALID_HANDLE_VALUE
        }
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        return condition.withLock {
            next += 0x10
            paths[next] = path
            return HANDLE(bitPattern: next)
        }
    }

    func lock(_ handle: HANDLE?, failImmediately: Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let id = handle.map({ Int(bitPattern: $0) }), let path = paths[id] else {
            setLastError(ERROR_INVALID_HANDLE)
            return false
        }
        while let holder = holders[path] {
            if holder == id || failImmediately {
                setLastError(ERROR_LOCK_VIOLATION)  // a second lock of the same range, even by the same handle
                return false
            }
            condition.wait()
        }
        holders[path] = id
        return true
    }

    func unlock(_ handle: HANDLE?) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let id = handle.map({ Int(bitPattern: $0) }), let path = paths[id], holders[path] == id else {
            setLastError(ERROR_NOT_LOCKED)
            return false
        }
        holders[path] = nil
        condition.broadcast()
        return true
    }

    func close(_ handle: HANDLE?) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let id = handle.map({ Int(bitPattern: $0) }), let path = paths.removeValue(forKey: id) else {
            setLastError(ERROR_INVALID_HANDLE)
            return false
        }
        if holders[path] == id {
            holders[path] = nil
            condition.broadcast()
        }
        return true
    }
}
