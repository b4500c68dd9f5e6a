// Test-only declaration shims of exactly the WinSDK API that the library's Windows files use
// (Sources/ProfirestAPI/Storage/FileLock+Windows.swift, TokenFile+Windows.swift, OwnerOnlySecurity+Windows.swift,
// LongPath+Windows.swift),
// so those files are type-checked and their logic tested on Linux (target PlatformShims, condition PROFIREST_SHIMS).
// Never part of the ProfirestAPI library or any product. This file: types, the file API and the handle table;
// WinSDKSecurityShims.swift: the token, SID and security-descriptor API, setting an existing file's DACL, reading its
// owner, EqualSid and LocalFree; WinSDKPathShims.swift: GetFullPathNameW, Sleep, and how every shim reads a path
// (Win32's normalisation, MAX_PATH unless `\\?\`-prefixed);
// WindowsShimControl.swift: what the tests use to inject failures and to read what happened.
//
// Each C declaration is cited from its learn.microsoft.com page, and declared with the types Swift's ClangImporter
// gives it on Windows — the point of these shims is that code which compiles against them compiles there:
// - typedefs: DWORD and ULONG = UInt32 (C `unsigned long` is 32-bit on Windows), WORD = UInt16, BYTE = UInt8,
//   WCHAR = UInt16, HANDLE = UnsafeMutableRawPointer (minwindef.h, winnt.h);
// - integer macros: the type of their literal, quoted from the SDK header beside each one — Int32 for `int` and
//   `long` literals, UInt32 for `0x80000000L` and other `unsigned long` ones (see "Macros" below, with the Swift code
//   that relies on it);
// - pointer parameters and pointer fields of structs without nullability annotations (the SDK has none, only SAL):
//   implicitly unwrapped (`T!`); `void **`-style out parameters `UnsafeMutablePointer<T?>!`;
// - `BOOL` (minwindef.h `typedef int BOOL;`): function parameters and results bridged to Swift `Bool`, struct fields
//   and `BOOL *` as `WindowsBool` (the bridging, WindowsBool and `INVALID_HANDLE_VALUE` are Swift's WinSDK overlay,
//   https://github.com/swiftlang/swift/blob/main/stdlib/public/Windows/WinSDK.swift);
// - a plain C enum (TOKEN_INFORMATION_CLASS, SE_OBJECT_TYPE): a RawRepresentable struct of Int32 with a constant per
//   case.
// Not confirmed by compiling on Windows, which no machine here can: the whole list above is the importer's documented
// and observed behaviour (the struct-field rule was checked on Linux with Glibc's iovec), and matches how
// swift-corelibs-foundation's Windows code spells the same calls (read for comparison, not copied).
//
// Behaviour, backed by the real file system of this machine plus an in-process table of handles, locks and the
// security and owner each file was created with:
// - CreateFileW models OPEN_ALWAYS (open or create), OPEN_EXISTING (ERROR_FILE_NOT_FOUND when the file is missing)
//   and CREATE_NEW (create; ERROR_FILE_EXISTS when the file exists),
//   ERROR_PATH_NOT_FOUND for a missing folder, and sharing (ERROR_SHARING_VIOLATION when an open handle's share mode
//   refuses the access asked for, or the new share mode refuses an open handle's access). A file it creates records
//   the security descriptor of lpSecurityAttributes, parsed from the SDDL it was made from — or "inherited from the
//   folder" when there is none; an existing file's security is left as it was (as the CreateFileW page says). A file
//   it creates is owned by the creating user, `WindowsShimUser.sid` (an owner the descriptor names is not applied;
//   the library names none); tests give a file another owner with `WindowsFiles.shared.setOwner`. A file the shims
//   did not create (written with Foundation by this process) counts as owned by that user too, as it would be on
//   Windows. Not modelled: an elevated administrator's default owner, the Administrators group.
//   A descriptor pointer that is not a live one from ConvertStringSecurityDescriptorToSecurityDescriptorW (freed
//   too early, say) fails with ERROR_INVALID_SECURITY_DESCR and is counted; so is an nLength that is not the size of
//   SECURITY_ATTRIBUTES (that check is the shim's own strictness).
// - WriteFile appends at the handle's position; WriteFile and FlushFileBuffers need GENERIC_WRITE.
// - MoveFileExW renames atomically (rename(2)), replacing the target only with MOVEFILE_REPLACE_EXISTING, and moves
//   the recorded security and owner with the file, as a rename on one NTFS volume keeps the file's own ACL and owner; it fails with
//   ERROR_SHARING_VIOLATION while the source is open without FILE_SHARE_DELETE. DeleteFileW likewise.
// - LockFileEx with LOCKFILE_EXCLUSIVE_LOCK (and without LOCKFILE_FAIL_IMMEDIATELY) waits until no other handle holds
//   the file's lock; UnlockFileEx releases it (ERROR_NOT_LOCKED when not held); CloseHandle releases what the handle
//   still holds. Only whole-file exclusive locks, as the library takes them, are modelled.
#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef unsigned long DWORD;`
public typealias DWORD = UInt32
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef unsigned long ULONG;`
public typealias ULONG = UInt32
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef ULONG *PULONG;`
public typealias PULONG = UnsafeMutablePointer<ULONG>
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef DWORD *LPDWORD;`
public typealias LPDWORD = UnsafeMutablePointer<DWORD>
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef DWORD *PDWORD;`
public typealias PDWORD = UnsafeMutablePointer<DWORD>
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef void *LPVOID;`
public typealias LPVOID = UnsafeMutableRawPointer
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef CONST void *LPCVOID;`
public typealias LPCVOID = UnsafeRawPointer
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef PVOID HANDLE;`
public typealias HANDLE = UnsafeMutableRawPointer
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef HANDLE *PHANDLE;`
public typealias PHANDLE = UnsafeMutablePointer<HANDLE?>
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef wchar_t WCHAR;` (16-bit)
public typealias WCHAR = UInt16
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef CONST WCHAR *LPCWSTR;`
public typealias LPCWSTR = UnsafePointer<WCHAR>
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef WCHAR *LPWSTR;`
public typealias LPWSTR = UnsafeMutablePointer<WCHAR>

/// Swift's WinSDK overlay (https://github.com/swiftlang/swift/blob/main/stdlib/public/Windows/WinSDK.swift): C `BOOL`
/// in struct fields. Function results of type `BOOL` are bridged to `Bool` and declared so below.
public struct WindowsBool: ExpressibleByBooleanLiteral, Equatable {
    var value: Int32
    /// Usage: `attributes.bInheritHandle.boolValue`
    public var boolValue: Bool { value != 0 }
    public init(booleanLiteral value: Bool) { self.init(value) }
    public init(_ value: Bool) { self.value = value ? 1 : 0 }
}

/// https://learn.microsoft.com/en-us/windows/win32/api/minwinbase/ns-minwinbase-overlapped — fields reduced to
/// what a zero-initialised OVERLAPPED for offset 0 needs (the real one has a union of Offset/OffsetHigh and Pointer).
public struct OVERLAPPED {
    public var Internal: UInt = 0
    public var InternalHigh: UInt = 0
    public var Offset: DWORD = 0
    public var OffsetHigh: DWORD = 0
    public var hEvent: HANDLE! = nil
    public init() {}
}
/// https://learn.microsoft.com/en-us/windows/win32/api/minwinbase/ns-minwinbase-overlapped — `LPOVERLAPPED`
public typealias LPOVERLAPPED = UnsafeMutablePointer<OVERLAPPED>

/// https://learn.microsoft.com/en-us/windows/win32/api/wtypesbase/ns-wtypesbase-security_attributes —
/// `typedef struct _SECURITY_ATTRIBUTES { DWORD nLength; LPVOID lpSecurityDescriptor; BOOL bInheritHandle; }
/// SECURITY_ATTRIBUTES, *PSECURITY_ATTRIBUTES, *LPSECURITY_ATTRIBUTES;` with the zero and memberwise initialisers
/// Swift gives an imported C struct. A pointer field without nullability annotation comes in implicitly unwrapped
/// (`LPVOID!`), as Glibc's `iovec.iov_base` does here (checked: it converts to a non-optional pointer without `!`);
/// `BOOL` in a struct stays `WindowsBool` (only function parameters and results are bridged to `Bool`).
public struct SECURITY_ATTRIBUTES {
    public var nLength: DWORD
    public var lpSecurityDescriptor: LPVOID!
    public var bInheritHandle: WindowsBool
    public init() {
        self.init(nLength: 0, lpSecurityDescriptor: nil, bInheritHandle: false)
    }
    public init(nLength: DWORD, lpSecurityDescriptor: LPVOID!, bInheritHandle: WindowsBool) {
        self.nLength = nLength
        self.lpSecurityDescriptor = lpSecurityDescriptor
        self.bInheritHandle = bInheritHandle
    }
}
public typealias LPSECURITY_ATTRIBUTES = UnsafeMutablePointer<SECURITY_ATTRIBUTES>

// MARK: Macros, each with the Swift type the ClangImporter gives it on Windows
//
// A macro that is an integer literal is imported as a constant of that literal's C type (the C rules: an unsuffixed
// literal is `int` if it fits; with `L` the first of `long`, `unsigned long` that fits; hexadecimal literals may also
// become unsigned). On Windows (LLP64) `int` and `long` are 32-bit, so `int` and `long` come in as `Int32` and
// `unsigned long` (DWORD) as `UInt32`: `0x40000000L` is a `long` (Int32) while `0x80000000L` does not fit `long` and
// is `unsigned long` (UInt32). So `GENERIC_READ | GENERIC_WRITE` does not compile in Swift (no `|` between UInt32 and
// Int32); each is converted on its own. swift-corelibs-foundation shows both sides: it redeclares GENERIC_WRITE,
// FILE_SHARE_*, FILE_ATTRIBUTE_NORMAL, MOVEFILE_* and OPEN_EXISTING as `DWORD(WinSDK.X)` because they come in as
// Int32 (Sources/Foundation/WinSDK+Extensions.swift), uses GENERIC_READ as a DWORD as it is, and compares
// GetLastError() with `DWORD(ERROR_FILE_NOT_FOUND)` (Sources/Foundation/FoundationErrors.swift).
// The literals below are the Windows 10 SDK's (10.0.16299.0 headers: winnt.h, fileapi.h, minwinbase.h, WinBase.h,
// minwindef.h, winerror.h), quoted with their suffix.

/// winnt.h: `#define GENERIC_READ (0x80000000L)` — too big for `long`, so `unsigned long`: UInt32 (DWORD).
/// https://learn.microsoft.com/en-us/windows/win32/secauthz/generic-access-rights
public var GENERIC_READ: UInt32 { 0x8000_0000 }
/// winnt.h: `#define GENERIC_WRITE (0x40000000L)` — `long`: Int32.
public var GENERIC_WRITE: Int32 { 0x4000_0000 }
/// winnt.h: `#define FILE_SHARE_READ 0x00000001` — `int`: Int32.
/// https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-createfilew (dwShareMode)
public var FILE_SHARE_READ: Int32 { 0x1 }
/// winnt.h: `#define FILE_SHARE_WRITE 0x00000002` — Int32.
public var FILE_SHARE_WRITE: Int32 { 0x2 }
/// winnt.h: `#define FILE_SHARE_DELETE 0x00000004` — Int32.
public var FILE_SHARE_DELETE: Int32 { 0x4 }
/// fileapi.h: `#define CREATE_NEW 1` — Int32. (dwCreationDisposition of CreateFileW)
public var CREATE_NEW: Int32 { 1 }
/// fileapi.h: `#define OPEN_EXISTING 3` — Int32.
public var OPEN_EXISTING: Int32 { 3 }
/// fileapi.h: `#define OPEN_ALWAYS 4` — Int32.
public var OPEN_ALWAYS: Int32 { 4 }
/// winnt.h: `#define FILE_ATTRIBUTE_NORMAL 0x00000080` — Int32.
/// https://learn.microsoft.com/en-us/windows/win32/fileio/file-attribute-constants
public var FILE_ATTRIBUTE_NORMAL: Int32 { 0x80 }
/// minwinbase.h: `#define LOCKFILE_FAIL_IMMEDIATELY 0x00000001` — Int32.
/// https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-lockfileex (dwFlags)
public var LOCKFILE_FAIL_IMMEDIATELY: Int32 { 0x1 }
/// minwinbase.h: `#define LOCKFILE_EXCLUSIVE_LOCK 0x00000002` — Int32.
public var LOCKFILE_EXCLUSIVE_LOCK: Int32 { 0x2 }
/// WinBase.h: `#define MOVEFILE_REPLACE_EXISTING 0x00000001` — Int32.
/// https://learn.microsoft.com/en-us/windows/win32/api/winbase/nf-winbase-movefileexw (dwFlags)
public var MOVEFILE_REPLACE_EXISTING: Int32 { 0x1 }
/// WinBase.h: `#define MOVEFILE_WRITE_THROUGH 0x00000008` — Int32. "This value has no effect" on a rename within one
/// volume: it only makes a move done as copy and delete flush before returning (the MoveFileExW page).
public var MOVEFILE_WRITE_THROUGH: Int32 { 0x8 }
/// minwindef.h: `#define MAX_PATH 260` — Int32. https://learn.microsoft.com/en-us/windows/win32/fileio/maximum-file-path-limitation
public var MAX_PATH: Int32 { 260 }
/// Swift's WinSDK overlay: `public var INVALID_HANDLE_VALUE: HANDLE { HANDLE(bitPattern: -1)! }`
public var INVALID_HANDLE_VALUE: HANDLE { HANDLE(bitPattern: -1)! }

// winerror.h: every code is a `long` literal (`#define ERROR_FILE_NOT_FOUND 2L`), so Int32; GetLastError() returns a
// DWORD, and comparing the two needs `DWORD(ERROR_…)`.
// https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes--0-499- (and --500-999-, --1300-1699-)

/// winerror.h: `#define ERROR_SUCCESS 0L`
public var ERROR_SUCCESS: Int32 { 0 }
/// winerror.h: `#define ERROR_FILE_NOT_FOUND 2L`
public var ERROR_FILE_NOT_FOUND: Int32 { 2 }
/// winerror.h: `#define ERROR_PATH_NOT_FOUND 3L`
public var ERROR_PATH_NOT_FOUND: Int32 { 3 }
/// winerror.h: `#define ERROR_ACCESS_DENIED 5L`
public var ERROR_ACCESS_DENIED: Int32 { 5 }
/// winerror.h: `#define ERROR_INVALID_HANDLE 6L`
public var ERROR_INVALID_HANDLE: Int32 { 6 }
/// winerror.h: `#define ERROR_SHARING_VIOLATION 32L`
public var ERROR_SHARING_VIOLATION: Int32 { 32 }
/// winerror.h: `#define ERROR_LOCK_VIOLATION 33L`
public var ERROR_LOCK_VIOLATION: Int32 { 33 }
/// winerror.h: `#define ERROR_FILE_EXISTS 80L`
public var ERROR_FILE_EXISTS: Int32 { 80 }
/// winerror.h: `#define ERROR_INVALID_PARAMETER 87L`
public var ERROR_INVALID_PARAMETER: Int32 { 87 }
/// winerror.h: `#define ERROR_INSUFFICIENT_BUFFER 122L`
public var ERROR_INSUFFICIENT_BUFFER: Int32 { 122 }
/// winerror.h: `#define ERROR_INVALID_NAME 123L`
public var ERROR_INVALID_NAME: Int32 { 123 }
/// winerror.h: `#define ERROR_NOT_LOCKED 158L`
public var ERROR_NOT_LOCKED: Int32 { 158 }
/// winerror.h: `#define ERROR_ALREADY_EXISTS 183L`
public var ERROR_ALREADY_EXISTS: Int32 { 183 }
/// winerror.h: `#define ERROR_FILENAME_EXCED_RANGE 206L`
public var ERROR_FILENAME_EXCED_RANGE: Int32 { 206 }
/// winerror.h: `#define ERROR_UNKNOWN_REVISION 1305L`
public var ERROR_UNKNOWN_REVISION: Int32 { 1305 }
/// winerror.h: `#define ERROR_INVALID_ACL 1336L`
public var ERROR_INVALID_ACL: Int32 { 1336 }
/// winerror.h: `#define ERROR_INVALID_SID 1337L`
public var ERROR_INVALID_SID: Int32 { 1337 }
/// winerror.h: `#define ERROR_INVALID_SECURITY_DESCR 1338L`
public var ERROR_INVALID_SECURITY_DESCR: Int32 { 1338 }

/// https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-createfilew —
/// `HANDLE CreateFileW(LPCWSTR lpFileName, DWORD dwDesiredAccess, DWORD dwShareMode,
/// LPSECURITY_ATTRIBUTES lpSecurityAttributes, DWORD dwCreationDisposition, DWORD dwFlagsAndAttributes,
/// HANDLE hTemplateFile);` Only OPEN_ALWAYS, OPEN_EXISTING and CREATE_NEW are modelled.
public func CreateFileW(
    _ lpFileName: LPCWSTR!, _ dwDesiredAccess: DWORD, _ dwShareMode: DWORD,
    _ lpSecurityAttributes: LPSECURITY_ATTRIBUTES!, _ dwCreationDisposition: DWORD, _ dwFlagsAndAttributes: DWORD,
    _ hTemplateFile: HANDLE!
) -> HANDLE! {
    let disposition: WindowsFiles.Disposition
    switch dwCreationDisposition {
    case DWORD(OPEN_ALWAYS): disposition = .openAlways
    case DWORD(OPEN_EXISTING): disposition = .openExisting
    case DWORD(CREATE_NEW): disposition = .createNew
    default: preconditionFailure("the WinSDK shim models OPEN_ALWAYS, OPEN_EXISTING and CREATE_NEW only")
    }
    if let code = WindowsShimThread.enter("CreateFileW") { return fail(code, INVALID_HANDLE_VALUE) }
    guard let path = Win32Path.native(string(lpFileName)) else { return INVALID_HANDLE_VALUE }
    var security = FileSecurity.inheritedFromFolder
    if let attributes = lpSecurityAttributes?.pointee {
        guard attributes.nLength == DWORD(MemoryLayout<SECURITY_ATTRIBUTES>.size) else {
            return fail(ERROR_INVALID_PARAMETER, INVALID_HANDLE_VALUE)
        }
        if let pointer = attributes.lpSecurityDescriptor {
            guard let descriptor = LocalMemory.shared.descriptor(at: pointer) else {
                WindowsShimThread.current.invalidDescriptorUses += 1
                return fail(ERROR_INVALID_SECURITY_DESCR, INVALID_HANDLE_VALUE)
            }
            security = .descriptor(descriptor)
        }
    }
    return WindowsFiles.shared.open(
        path, access: dwDesiredAccess, share: dwShareMode, disposition: disposition, security: security)
}

/// https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-writefile —
/// `BOOL WriteFile(HANDLE hFile, LPCVOID lpBuffer, DWORD nNumberOfBytesToWrite, LPDWORD lpNumberOfBytesWritten,
/// LPOVERLAPPED lpOverlapped);` Synchronous only (lpOverlapped must be nil).
public func WriteFile(
    _ hFile: HANDLE!, _ lpBuffer: LPCVOID!, _ nNumberOfBytesToWrite: DWORD, _ lpNumberOfBytesWritten: LPDWORD!,
    _ lpOverlapped: LPOVERLAPPED!
) -> Bool {
    precondition(lpOverlapped == nil, "the WinSDK shim models synchronous writes only")
    if let code = WindowsShimThread.enter("WriteFile") { return fail(code, false) }
    let bytes = Data(bytes: lpBuffer, count: Int(nNumberOfBytesToWrite))
    guard WindowsFiles.shared.write(hFile, bytes) else { return false }
    lpNumberOfBytesWritten?.pointee = nNumberOfBytesToWrite
    return true
}

/// https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-flushfilebuffers —
/// `BOOL FlushFileBuffers(HANDLE hFile);` (the handle needs GENERIC_WRITE)
public func FlushFileBuffers(_ hFile: HANDLE!) -> Bool {
    if let code = WindowsShimThread.enter("FlushFileBuffers") { return fail(code, false) }
    return WindowsFiles.shared.flush(hFile)
}

/// https://learn.microsoft.com/en-us/windows/win32/api/winbase/nf-winbase-movefileexw —
/// `BOOL MoveFileExW(LPCWSTR lpExistingFileName, LPCWSTR lpNewFileName, DWORD dwFlags);`
/// Only MOVEFILE_REPLACE_EXISTING and MOVEFILE_WRITE_THROUGH are modelled (a same-volume rename).
public func MoveFileExW(_ lpExistingFileName: LPCWSTR!, _ lpNewFileName: LPCWSTR!, _ dwFlags: DWORD) -> Bool {
    precondition(
        dwFlags & ~DWORD(MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH) == 0,
        "the WinSDK shim models MOVEFILE_REPLACE_EXISTING and MOVEFILE_WRITE_THROUGH only")
    if let code = WindowsShimThread.enter("MoveFileExW") { return fail(code, false) }
    guard let from = Win32Path.native(string(lpExistingFileName)), let to = Win32Path.native(string(lpNewFileName))
    else { return false }
    return WindowsFiles.shared.move(from, to, replace: dwFlags & DWORD(MOVEFILE_REPLACE_EXISTING) != 0)
}

/// https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-deletefilew —
/// `BOOL DeleteFileW(LPCWSTR lpFileName);`
@discardableResult
public func DeleteFileW(_ lpFileName: LPCWSTR!) -> Bool {
    if let code = WindowsShimThread.enter("DeleteFileW") { return fail(code, false) }
    guard let path = Win32Path.native(string(lpFileName)) else { return false }
    return WindowsFiles.shared.delete(path)
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
    if let code = WindowsShimThread.enter("LockFileEx") { return fail(code, false) }
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
    if let code = WindowsShimThread.enter("UnlockFileEx") { return fail(code, false) }
    return WindowsFiles.shared.unlock(hFile)
}

/// https://learn.microsoft.com/en-us/windows/win32/api/handleapi/nf-handleapi-closehandle —
/// `BOOL CloseHandle(HANDLE hObject);` (file and access-token handles)
@discardableResult
public func CloseHandle(_ hObject: HANDLE!) -> Bool {
    _ = WindowsShimThread.enter("CloseHandle")
    return WindowsFiles.shared.close(hObject)
}

/// https://learn.microsoft.com/en-us/windows/win32/api/errhandlingapi/nf-errhandlingapi-getlasterror —
/// `DWORD GetLastError();` (per thread)
public func GetLastError() -> DWORD {
    (Thread.current.threadDictionary["WindowsShims.lastError"] as? DWORD) ?? 0
}

func setLastError(_ code: DWORD) {
    Thread.current.threadDictionary["WindowsShims.lastError"] = code
}

func setLastError(_ code: Int32) {
    setLastError(DWORD(code))
}

func fail<T>(_ code: DWORD, _ result: T) -> T {
    setLastError(code)
    return result
}

/// `fail` with a winerror.h code as imported (Int32).
func fail<T>(_ code: Int32, _ result: T) -> T {
    fail(DWORD(code), result)
}

/// A NUL-terminated UTF-16 string as Swift text.
func string(_ pointer: UnsafePointer<WCHAR>) -> String {
    var length = 0
    while pointer[length] != 0 { length += 1 }
    return String(decoding: UnsafeBufferPointer(start: pointer, count: length), as: UTF16.self)
}

/// A file's security as the shims recorded it: as CreateFileW created the file, or as SetNamedSecurityInfoW last set
/// it. Usage: `WindowsFiles.shared.security(atPath: p) == .inheritedFromFolder`
public enum FileSecurity: Equatable, Sendable {
    /// Created without a security descriptor: Windows gives it what the folder passes on to new files.
    case inheritedFromFolder
    /// Created with (or later given) this security descriptor.
    case descriptor(SecurityDescriptorModel)
}

/// A file CreateFileW created, in the order of creation. Usage: `WindowsFiles.shared.creations(inFolder: f)`
public struct FileCreation: Equatable, Sendable {
    public let path: String
    public let security: FileSecurity
}

/// The handles, locks and file security behind the WinSDK shims, for the process.
/// Usage: `WindowsFiles.shared.openHandles`
public final class WindowsFiles: @unchecked Sendable {
    /// The process's table. Usage: `WindowsFiles.shared.openHandles`
    public static let shared = WindowsFiles()

    private enum Entry {
        case file(path: String, access: DWORD, share: DWORD, offset: UInt64)
        case token
        case process(id: DWORD, access: DWORD)
    }

    private let condition = NSCondition()
    private var next = 0x1000
    private var entries: [Int: Entry] = [:]
    private var holders: [String: Int] = [:]
    private var securities: [String: FileSecurity] = [:]
    private var owners: [String: String] = [:]
    private var created: [FileCreation] = []
    private var terminatedProcesses: [DWORD] = []

    /// The process ids TerminateProcess was asked to end, in order. Usage: `WindowsFiles.shared.terminated`
    public var terminated: [DWORD] { condition.withLock { terminatedProcesses } }

    func openProcess(_ id: DWORD, access: DWORD) -> HANDLE {
        condition.withLock { insert(.process(id: id, access: access)) }
    }

    func terminate(_ handle: HANDLE?) -> Bool {
        condition.withLock {
            guard let key = handle.map({ Int(bitPattern: $0) }), case .process(let id, let access) = entries[key] else {
                return fail(ERROR_INVALID_HANDLE, false)
            }
            guard access & DWORD(PROCESS_TERMINATE) != 0 else { return fail(ERROR_ACCESS_DENIED, false) }
            terminatedProcesses.append(id)
            return true
        }
    }

    /// How many handles (files and access tokens) are open, for tests checking that nothing leaks.
    public var openHandles: Int { condition.withLock { entries.count } }

    /// The security the file at `path` was created with through CreateFileW (following it through MoveFileExW) or
    /// last given by SetNamedSecurityInfoW, or nil for a file the shims neither created nor changed.
    /// Usage: `WindowsFiles.shared.security(atPath: tokenPath)`
    public func security(atPath path: String) -> FileSecurity? {
        condition.withLock { securities[path] }
    }

    /// Replaces the security recorded for the existing file or folder at `path` (SetNamedSecurityInfoW); false when
    /// nothing is there.
    func setSecurity(_ path: String, _ security: FileSecurity) -> Bool {
        condition.withLock {
            guard FileManager.default.fileExists(atPath: path) else { return false }
            securities[path] = security
            return true
        }
    }

    /// The owner's SID string of the file or folder at `path`: the one recorded (its creator through CreateFileW, or
    /// set by `setOwner`), else the shims' user for anything else that exists; nil when nothing is there.
    /// Usage: `WindowsFiles.shared.owner(atPath: tokenPath) == WindowsShimUser.sid`
    public func owner(atPath path: String) -> String? {
        condition.withLock {
            owners[path] ?? (FileManager.default.fileExists(atPath: path) ? WindowsShimUser.sid : nil)
        }
    }

    /// Makes `sid` (an `S-1-…` string) the owner of the existing file or folder at `path`, as another account that
    /// created it, or took ownership of it, would be. Usage: `WindowsFiles.shared.setOwner("S-1-5-18", atPath: p)`
    public func setOwner(_ sid: String, atPath path: String) {
        precondition(WindowsShimUser.binarySID(of: sid) != nil, "not a SID string: \(sid)")
        condition.withLock {
            precondition(FileManager.default.fileExists(atPath: path), "no file at \(path)")
            owners[path] = sid
        }
    }

    /// The files CreateFileW created directly in `folder`, oldest first — including those since renamed or deleted.
    /// Usage: `WindowsFiles.shared.creations(inFolder: folder.path)`
    public func creations(inFolder folder: String) -> [FileCreation] {
        condition.withLock { created.filter { ($0.path as NSString).deletingLastPathComponent == folder } }
    }

    func openToken() -> HANDLE {
        condition.withLock { insert(.token) }
    }

    func isToken(_ handle: HANDLE?) -> Bool {
        condition.withLock {
            guard let id = handle.map({ Int(bitPattern: $0) }), case .token = entries[id] else { return false }
            return true
        }
    }

    private func insert(_ entry: Entry) -> HANDLE {
        next += 0x10
        entries[next] = entry
        return HANDLE(bitPattern: next)!
    }

    private func openFiles(_ path: String) -> [(access: DWORD, share: DWORD)] {
        entries.values.compactMap {
            guard case .file(let p, let access, let share, _) = $0, p == path else { return nil }
            return (access, share)
        }
    }

    enum Disposition { case openAlways, openExisting, createNew }

    func open(_ path: String, access: DWORD, share: DWORD, disposition: Disposition, security: FileSecurity) -> HANDLE? {
        condition.lock()
        defer { condition.unlock() }
        let folder = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.isEmpty ? "." : folder, isDirectory: &isDirectory),
            isDirectory.boolValue
        else { return fail(ERROR_PATH_NOT_FOUND, INVALID_HANDLE_VALUE) }
        let exists = FileManager.default.fileExists(atPath: path)
        if exists && disposition == .createNew { return fail(ERROR_FILE_EXISTS, INVALID_HANDLE_VALUE) }
        if !exists && disposition == .openExisting { return fail(ERROR_FILE_NOT_FOUND, INVALID_HANDLE_VALUE) }
        let read = GENERIC_READ, write = DWORD(GENERIC_WRITE)
        for other in openFiles(path) {
            let refused =
                (access & read != 0 && other.share & DWORD(FILE_SHARE_READ) == 0)
                || (access & write != 0 && other.share & DWORD(FILE_SHARE_WRITE) == 0)
                || (other.access & read != 0 && share & DWORD(FILE_SHARE_READ) == 0)
                || (other.access & write != 0 && share & DWORD(FILE_SHARE_WRITE) == 0)
            if refused { return fail(ERROR_SHARING_VIOLATION, INVALID_HANDLE_VALUE) }
        }
        if exists {
            // As documented for OPEN_ALWAYS on an existing file; OPEN_EXISTING leaves it as it was (not modelled).
            if disposition == .openAlways { setLastError(ERROR_ALREADY_EXISTS) }
        } else {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                return fail(ERROR_ACCESS_DENIED, INVALID_HANDLE_VALUE)
            }
            securities[path] = security
            owners[path] = WindowsShimUser.sid
            created.append(FileCreation(path: path, security: security))
            setLastError(ERROR_SUCCESS)
        }
        return insert(.file(path: path, access: access, share: share, offset: 0))
    }

    func write(_ handle: HANDLE?, _ bytes: Data) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let id = handle.map({ Int(bitPattern: $0) }),
            case .file(let path, let access, let share, let offset) = entries[id]
        else { return fail(ERROR_INVALID_HANDLE, false) }
        guard access & DWORD(GENERIC_WRITE) != 0 else { return fail(ERROR_ACCESS_DENIED, false) }
        guard let file = FileHandle(forUpdatingAtPath: path) else { return fail(ERROR_ACCESS_DENIED, false) }
        defer { try? file.close() }
        do {
            try file.seek(toOffset: offset)
            try file.write(contentsOf: bytes)
        } catch {
            return fail(ERROR_ACCESS_DENIED, false)
        }
        entries[id] = .file(path: path, access: access, share: share, offset: offset + UInt64(bytes.count))
        return true
    }

    func flush(_ handle: HANDLE?) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let id = handle.map({ Int(bitPattern: $0) }), case .file(_, let access, _, _) = entries[id] else {
            return fail(ERROR_INVALID_HANDLE, false)
        }
        guard access & DWORD(GENERIC_WRITE) != 0 else { return fail(ERROR_ACCESS_DENIED, false) }
        return true
    }

    func move(_ from: String, _ to: String, replace: Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard FileManager.default.fileExists(atPath: from) else { return fail(ERROR_FILE_NOT_FOUND, false) }
        if openFiles(from).contains(where: { $0.share & DWORD(FILE_SHARE_DELETE) == 0 }) {
            return fail(ERROR_SHARING_VIOLATION, false)
        }
        if FileManager.default.fileExists(atPath: to) {
            guard replace else { return fail(ERROR_ALREADY_EXISTS, false) }
            if openFiles(to).contains(where: { $0.share & DWORD(FILE_SHARE_DELETE) == 0 }) {
                return fail(ERROR_ACCESS_DENIED, false)
            }
        }
        guard rename(from, to) == 0 else { return fail(ERROR_ACCESS_DENIED, false) }
        securities[to] = securities.removeValue(forKey: from)
        owners[to] = owners.removeValue(forKey: from)
        return true
    }

    func delete(_ path: String) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard FileManager.default.fileExists(atPath: path) else { return fail(ERROR_FILE_NOT_FOUND, false) }
        if openFiles(path).contains(where: { $0.share & DWORD(FILE_SHARE_DELETE) == 0 }) {
            return fail(ERROR_SHARING_VIOLATION, false)
        }
        guard (try? FileManager.default.removeItem(atPath: path)) != nil else {
            return fail(ERROR_ACCESS_DENIED, false)
        }
        securities[path] = nil
        owners[path] = nil
        return true
    }

    func lock(_ handle: HANDLE?, failImmediately: Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let id = handle.map({ Int(bitPattern: $0) }), case .file(let path, _, _, _) = entries[id] else {
            return fail(ERROR_INVALID_HANDLE, false)
        }
        while let holder = holders[path] {
            if holder == id || failImmediately {
                return fail(ERROR_LOCK_VIOLATION, false)  // a second lock of the same range, even by the same handle
            }
            condition.wait()
            guard entries[id] != nil else { return fail(ERROR_INVALID_HANDLE, false) }
        }
        holders[path] = id
        return true
    }

    func unlock(_ handle: HANDLE?) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let id = handle.map({ Int(bitPattern: $0) }), case .file(let path, _, _, _) = entries[id],
            holders[path] == id
        else { return fail(ERROR_NOT_LOCKED, false) }
        holders[path] = nil
        condition.broadcast()
        return true
    }

    func close(_ handle: HANDLE?) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let id = handle.map({ Int(bitPattern: $0) }), let entry = entries.removeValue(forKey: id) else {
            return fail(ERROR_INVALID_HANDLE, false)
        }
        if case .file(let path, _, _, _) = entry, holders[path] == id {
            holders[path] = nil
            condition.broadcast()
        }
        return true
    }
}
