// Test-only declaration shims of the WinSDK process API that Sources/ProfirestTestSupport/ProcessControl+Windows.swift
// uses (ending a child process at once, this process's CPU time). See WinSDKShims.swift for how declarations are typed
// and cited; the headers quoted are the Windows 10 SDK's (10.0.16299.0).
//
// Behaviour: only what a type check needs. OpenProcess hands out a process handle (in the handle table, so CloseHandle
// closes it) for any pid; TerminateProcess records the pid it was asked to end (`WindowsFiles.shared.terminated`) and
// ends nothing; GetProcessTimes gives this process's CPU time as Linux counts it (CLOCK_PROCESS_CPUTIME_ID) in kernel
// time, zero user time and zero creation and exit times.
#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef unsigned int UINT;`
public typealias UINT = UInt32

/// winnt.h: `#define PROCESS_TERMINATE (0x0001)` — `int`: Int32.
/// https://learn.microsoft.com/en-us/windows/win32/procthread/process-security-and-access-rights
public var PROCESS_TERMINATE: Int32 { 0x0001 }

/// https://learn.microsoft.com/en-us/windows/win32/api/minwinbase/ns-minwinbase-filetime — `typedef struct _FILETIME {
/// DWORD dwLowDateTime; DWORD dwHighDateTime; } FILETIME, *PFILETIME, *LPFILETIME;` (minwinbase.h): a count of 100 ns
/// intervals, with the zero and memberwise initialisers Swift gives an imported C struct.
public struct FILETIME {
    public var dwLowDateTime: DWORD
    public var dwHighDateTime: DWORD
    public init() { self.init(dwLowDateTime: 0, dwHighDateTime: 0) }
    public init(dwLowDateTime: DWORD, dwHighDateTime: DWORD) {
        self.dwLowDateTime = dwLowDateTime
        self.dwHighDateTime = dwHighDateTime
    }
}
/// minwinbase.h — `*LPFILETIME`
public typealias LPFILETIME = UnsafeMutablePointer<FILETIME>

/// https://learn.microsoft.com/en-us/windows/win32/api/processthreadsapi/nf-processthreadsapi-openprocess —
/// `HANDLE OpenProcess(DWORD dwDesiredAccess, BOOL bInheritHandle, DWORD dwProcessId);` "If the function fails, the
/// return value is NULL."
public func OpenProcess(_ dwDesiredAccess: DWORD, _ bInheritHandle: Bool, _ dwProcessId: DWORD) -> HANDLE! {
    if let code = WindowsShimThread.enter("OpenProcess") { return fail(code, nil) }
    return WindowsFiles.shared.openProcess(dwProcessId, access: dwDesiredAccess)
}

/// https://learn.microsoft.com/en-us/windows/win32/api/processthreadsapi/nf-processthreadsapi-terminateprocess —
/// `BOOL TerminateProcess(HANDLE hProcess, UINT uExitCode);` The handle needs PROCESS_TERMINATE.
public func TerminateProcess(_ hProcess: HANDLE!, _ uExitCode: UINT) -> Bool {
    if let code = WindowsShimThread.enter("TerminateProcess") { return fail(code, false) }
    return WindowsFiles.shared.terminate(hProcess)
}

/// https://learn.microsoft.com/en-us/windows/win32/api/processthreadsapi/nf-processthreadsapi-getprocesstimes —
/// `BOOL GetProcessTimes(HANDLE hProcess, LPFILETIME lpCreationTime, LPFILETIME lpExitTime, LPFILETIME lpKernelTime,
/// LPFILETIME lpUserTime);` Only the current process's pseudo-handle is modelled.
public func GetProcessTimes(
    _ hProcess: HANDLE!, _ lpCreationTime: LPFILETIME!, _ lpExitTime: LPFILETIME!, _ lpKernelTime: LPFILETIME!,
    _ lpUserTime: LPFILETIME!
) -> Bool {
    if let code = WindowsShimThread.enter("GetProcessTimes") { return fail(code, false) }
    guard hProcess == HANDLE(bitPattern: -1), let lpCreationTime, let lpExitTime, let lpKernelTime, let lpUserTime
    else { return fail(ERROR_INVALID_HANDLE, false) }
    var now = timespec()
    _ = Glibc.clock_gettime(Glibc.CLOCK_PROCESS_CPUTIME_ID, &now)
    let hundredNanoseconds = UInt64(now.tv_sec) * 10_000_000 + UInt64(now.tv_nsec) / 100
    lpCreationTime.pointee = FILETIME()
    lpExitTime.pointee = FILETIME()
    lpKernelTime.pointee = FILETIME(
        dwLowDateTime: DWORD(truncatingIfNeeded: hundredNanoseconds), dwHighDateTime: DWORD(hundredNanoseconds >> 32))
    lpUserTime.pointee = FILETIME()
    return true
}
