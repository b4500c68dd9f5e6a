// Windows only. On Linux the test-only target TestSupportWindowsCheck compiles this same file (PROFIREST_SHIMS) against
// the WinSDK shims (Sources/WindowsShims). It imports no Foundation, so that only WinSDK's names are in scope: a POSIX
// call written here fails that build, as it would fail on Windows.
#if os(Windows) || PROFIREST_SHIMS
#if PROFIREST_SHIMS
import WindowsShims
#else
import WinSDK
#endif

enum OSProcesses: OSProcessControl {
    static func end(_ pid: Int32) {
        // What Process.terminate() does on Windows too: TerminateProcess ends the process at once.
        guard let process = OpenProcess(DWORD(PROCESS_TERMINATE), false, DWORD(bitPattern: pid)) else { return }
        _ = TerminateProcess(process, 1)
        _ = CloseHandle(process)
    }

    /// TerminateProcess's exit code above; Foundation reports it as an exit.
    static func endedByEnd(signal: Bool, status: Int32) -> Bool {
        !signal && status == 1
    }

    static func cpuMicroseconds() -> Double {
        var creation = FILETIME()
        var exit = FILETIME()
        var kernel = FILETIME()
        var user = FILETIME()
        guard GetProcessTimes(GetCurrentProcess(), &creation, &exit, &kernel, &user) else { return .nan }
        return (hundredNanoseconds(kernel) + hundredNanoseconds(user)) / 10
    }

    /// GetThreadTimes is not among the shims' declarations; no measurement of the bench needs it on Windows.
    static func threadCPUMicroseconds() -> Double? { nil }

    /// Python's `time.monotonic_ns()` reads QueryPerformanceCounter on Windows, a clock this code does not read: the
    /// bench measures no event latency there.
    static func monotonicNanoseconds() -> UInt64? { nil }

    static var clockTicksPerSecond: Double? { nil }

    private static func hundredNanoseconds(_ time: FILETIME) -> Double {
        Double(UInt64(time.dwHighDateTime) << 32 | UInt64(time.dwLowDateTime))
    }
}
#endif
