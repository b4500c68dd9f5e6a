// Linux, macOS, Android. The Windows counterpart is ProcessControl+Windows.swift.
#if !os(Windows) && !PROFIREST_SHIMS
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

enum OSProcesses: OSProcessControl {
    static func end(_ pid: Int32) {
        _ = kill(pid, SIGKILL)
    }

    static func endedByEnd(signal: Bool, status: Int32) -> Bool {
        signal && status == SIGKILL
    }

    static func cpuMicroseconds() -> Double {
        // CLOCK_PROCESS_CPUTIME_ID is user and system time of every thread, like getrusage's, and is spelt alike with
        // Glibc and Darwin (getrusage's RUSAGE_SELF is not).
        var now = timespec()
        guard clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now) == 0 else { return .nan }
        return Double(now.tv_sec) * 1e6 + Double(now.tv_nsec) / 1e3
    }

    static func threadCPUMicroseconds() -> Double? {
        var now = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) == 0 else { return nil }
        return Double(now.tv_sec) * 1e6 + Double(now.tv_nsec) / 1e3
    }

    static func monotonicNanoseconds() -> UInt64? {
        var now = timespec()
        guard clock_gettime(CLOCK_MONOTONIC, &now) == 0 else { return nil }
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    static var clockTicksPerSecond: Double? {
        let ticks = sysconf(Int32(_SC_CLK_TCK))
        return ticks > 0 ? Double(ticks) : nil
    }
}
#endif
