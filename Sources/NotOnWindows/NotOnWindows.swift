// Test-only (Linux): POSIX names that the Windows C runtime (the UCRT, which Swift imports as `ucrt` and Foundation
// re-exports as `CRT` there) does not have, declared once more here with Glibc's own Swift signatures. On Linux every
// file that imports Foundation sees Glibc (Foundation re-exports it), so without these a Windows-only file, or a portable
// file, could call `usleep` or `kill(…, SIGKILL)` and compile here, then fail on Windows. This module is seen by the
// Windows files compiled in PlatformShims and TestSupportWindowsCheck (WindowsShims re-exports it) and by every file of
// the targets that compile portable code for Windows (TestSupportWindowsCheck, BenchWindowsCheck import it into each
// file). There such a call is ambiguous and the build fails:
//
//     error: ambiguous use of 'usleep'
//     note: found this candidate in module 'NotOnWindows'     ← this file: not on Windows
//     note: found this candidate in module 'SwiftGlibc'
//
// The list is the POSIX API this package's Swift code uses somewhere (the POSIX storage files, the tests, the bench)
// and its near relatives — not all of POSIX: a name missing here is not caught. That none of these is in the UCRT is
// from its function reference (https://learn.microsoft.com/en-us/cpp/c-runtime-library/reference/crt-alphabetical-function-reference)
// and its list of POSIX names it keeps under a leading underscore
// (https://learn.microsoft.com/en-us/cpp/c-runtime-library/compatibility): no usleep, sleep, nanosleep, kill, fork,
// waitpid, getrusage, sysconf, clock_gettime (it has timespec_get), flock, fchmod, fsync (it has _commit), getuid,
// setenv, unsetenv (_putenv_s), mkstemp (_mktemp_s); signal.h has SIGINT, SIGILL, SIGFPE, SIGSEGV, SIGTERM, SIGBREAK
// and SIGABRT but no SIGKILL (https://learn.microsoft.com/en-us/cpp/c-runtime-library/reference/signal); fcntl.h has
// _O_NOINHERIT but no O_CLOEXEC or O_DIRECTORY. What Windows has instead: Thread.sleep or Sleep, TerminateProcess,
// GetProcessTimes, LockFileEx, FlushFileBuffers, ProcessInfo.
//
// Where two of these meet in one expression (`kill(pid, SIGKILL)`) the compiler reports "failed to produce diagnostic
// for expression" instead of the ambiguity; it is the same failure. A file that sees no Glibc — the Windows files that
// import only WindowsShims, as on Windows they import only WinSDK — finds these alone, and each is deprecated with the
// reason, a warning that `make build` (-warnings-as-errors) turns into an error:
//
//     error: 'usleep' is deprecated: not in the Windows C runtime: use Thread.sleep (Foundation) or Sleep (WinSDK)
//
// The bodies never run.
#if canImport(Glibc)
import Glibc

@available(*, deprecated, message: "not in the Windows C runtime: use Thread.sleep (Foundation) or Sleep (WinSDK)")
public func usleep(_ __useconds: __useconds_t) -> Int32 { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime: use Thread.sleep (Foundation) or Sleep (WinSDK)")
public func sleep(_ __seconds: UInt32) -> UInt32 { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime: use Thread.sleep (Foundation) or Sleep (WinSDK)")
public func nanosleep(_ __requested_time: UnsafePointer<timespec>!, _ __remaining: UnsafeMutablePointer<timespec>!)
    -> Int32
{ fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime: TerminateProcess ends a process at once (ProcessControl.kill in ProfirestTestSupport)")
public func kill(_ __pid: __pid_t, _ __sig: Int32) -> Int32 { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime: signal.h there has no SIGKILL")
public var SIGKILL: Int32 { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime: Foundation's Process starts children")
public func fork() -> __pid_t { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime: Process.waitUntilExit")
public func waitpid(_ __pid: __pid_t, _ __stat_loc: UnsafeMutablePointer<Int32>!, _ __options: Int32) -> __pid_t {
    fatalError("not on Windows")
}
@available(*, deprecated, message: "not in the Windows C runtime: GetProcessTimes (ProcessControl.cpuMicroseconds)")
public func getrusage(_ __who: __rusage_who_t, _ __usage: UnsafeMutablePointer<Glibc.rusage>!) -> Int32 {
    fatalError("not on Windows")
}
@available(*, deprecated, message: "not in the Windows C runtime")
public var RUSAGE_SELF: __rusage_who { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime")
public func sysconf(_ __name: Int32) -> Int { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime: DispatchTime, or QueryPerformanceCounter")
public func clock_gettime(_ __clock_id: clockid_t, _ __tp: UnsafeMutablePointer<timespec>) -> Int32 {
    fatalError("not on Windows")
}
@available(*, deprecated, message: "not in the Windows C runtime")
public var CLOCK_MONOTONIC: Int32 { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime")
public var CLOCK_PROCESS_CPUTIME_ID: Int32 { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime: LockFileEx (FileLock+Windows)")
public func flock(_ __fd: Int32, _ __operation: Int32) -> Int32 { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime")
public var LOCK_EX: Int32 { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime")
public var LOCK_UN: Int32 { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime: an ACL (OwnerOnlySecurity+Windows)")
public func fchmod(_ __fd: Int32, _ __mode: __mode_t) -> Int32 { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime: FlushFileBuffers")
public func fsync(_ __fd: Int32) -> Int32 { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime: handles are not inherited unless asked for")
public var O_CLOEXEC: Int32 { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime")
public var O_DIRECTORY: Int32 { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime: the process token's user SID (OwnerOnlySecurity+Windows)")
public func getuid() -> __uid_t { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime")
public func geteuid() -> __uid_t { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime: ProcessInfo.processInfo.environment, or _putenv_s")
public func setenv(_ __name: UnsafePointer<CChar>!, _ __value: UnsafePointer<CChar>, _ __replace: Int32) -> Int32 {
    fatalError("not on Windows")
}
@available(*, deprecated, message: "not in the Windows C runtime")
public func unsetenv(_ __name: UnsafePointer<CChar>) -> Int32 { fatalError("not on Windows") }
@available(*, deprecated, message: "not in the Windows C runtime: FileManager's temporary directory and a random name")
public func mkstemp(_ __template: UnsafeMutablePointer<CChar>) -> Int32 { fatalError("not on Windows") }
#endif
