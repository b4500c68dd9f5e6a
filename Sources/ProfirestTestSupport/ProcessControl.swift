import Foundation

/// The few things the tests and the bench do to processes that differ by platform: end a child at once, read this
/// process's CPU time, read the clock the bench server stamps its events with. Not part of the library.
///
/// The platform calls are in ProcessControl+POSIX.swift and ProcessControl+Windows.swift, each an `OSProcesses` of the
/// shape `OSProcessControl` declares, so that the two cannot drift apart: the POSIX one is compiled here, the Windows one
/// also by `make build`, against the WinSDK shims (target TestSupportWindowsCheck, Linux only).
///
/// ```swift
/// ProcessControl.kill(server.process)
/// ```
public enum ProcessControl {
    /// Ends `process` at once, as SIGKILL does on POSIX (TerminateProcess on Windows): it runs no handler and flushes
    /// nothing, as after a crash. Returns without waiting. Usage: `ProcessControl.kill(writer.process)`
    public static func kill(_ process: Process) {
        OSProcesses.end(process.processIdentifier)
    }

    /// Whether `process` ended because it was killed at once (SIGKILL on POSIX; on Windows the exit code
    /// `kill(_:)` gives, 1), not by exiting on its own. Usage: `if ProcessControl.wasKilled(writer) { … }`
    public static func wasKilled(_ process: Process) -> Bool {
        !process.isRunning && OSProcesses.endedByEnd(signal: process.terminationReason == .uncaughtSignal, status: process.terminationStatus)
    }

    /// The CPU time this process has used, user and system, in microseconds. Usage: `let before = ProcessControl.cpuMicroseconds()`
    public static func cpuMicroseconds() -> Double {
        OSProcesses.cpuMicroseconds()
    }

    /// The CPU time the calling thread has used, user and system, in microseconds, or nil where this code reads no
    /// such clock (Windows): for leaving a measurement's own work out of a process's figure.
    /// Usage: `let before = ProcessControl.threadCPUMicroseconds()`
    public static func threadCPUMicroseconds() -> Double? {
        OSProcesses.threadCPUMicroseconds()
    }

    /// CLOCK_MONOTONIC in nanoseconds — the clock Python's `time.monotonic_ns()` reads on Linux and macOS, with which
    /// the bench server stamps its events — or nil where this code reads no such clock (Windows).
    /// Usage: `let now = ProcessControl.monotonicNanoseconds()`
    public static func monotonicNanoseconds() -> UInt64? {
        OSProcesses.monotonicNanoseconds()
    }

    /// This process's threads now (/proc/self/task, Linux), nil where there is no such list.
    /// Usage: `let before = ProcessControl.threadCount() ?? 0`
    public static func threadCount() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count
    }

    /// The CPU time, user and system, in seconds, that this process's threads whose name starts with `prefix` have
    /// used (/proc/self/task/*/comm, Linux: a thread's system name, at most 15 bytes); nil when no such thread is found.
    /// What one kind of thread costs, apart from whatever else the process (or a loaded machine) does meanwhile.
    /// Usage: `let engine = ProcessControl.cpuSecondsOfThreads(named: "ProfirestCurl")`
    public static func cpuSecondsOfThreads(named prefix: String) -> Double? {
        guard let ticks = clockTicksPerSecond,
              let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        var seconds: Double?
        for task in tasks {
            let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            guard name.hasPrefix(prefix),
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // After the name: state is the 3rd field of the line, utime the 14th and stime the 15th.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
            seconds = (seconds ?? 0) + (user + system) / ticks
        }
        return seconds
    }

    /// How many times this process's threads whose name starts with `prefix` have been switched out — woken from a
    /// wait or preempted (/proc/self/task/*/status, `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches`, Linux);
    /// nil when no such thread is found. A count of wake-ups, unlike CPU time, does not grow because the machine is busy:
    /// a thread that does nothing while idle shows (almost) none however loaded the cores are.
    /// Usage: `let wakes = ProcessControl.switchesOfThreads(named: "ProfirestCurl")`
    public static func switchesOfThreads(named prefix: String) -> (voluntary: Int, involuntary: Int)? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        var total: (voluntary: Int, involuntary: Int)?
        for task in tasks {
            let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            guard name.hasPrefix(prefix),
                  let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8) else { continue }
            var counts = (voluntary: 0, involuntary: 0)
            for line in status.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, let value = Int(parts[1].trimmingCharacters(in: .whitespaces)) else { continue }
                if parts[0] == "voluntary_ctxt_switches" { counts.voluntary = value }
                if parts[0] == "nonvoluntary_ctxt_switches" { counts.involuntary = value }
            }
            total = ((total?.voluntary ?? 0) + counts.voluntary, (total?.involuntary ?? 0) + counts.involuntary)
        }
        return total
    }

    /// Clock ticks per second of the CPU times in /proc (Linux), nil where there are none.
    /// Usage: `let ticks = ProcessControl.clockTicksPerSecond ?? .nan`
    public static var clockTicksPerSecond: Double? {
        OSProcesses.clockTicksPerSecond
    }
}

/// What each platform's file provides, the same on every platform (see `ProcessControl`).
protocol OSProcessControl {
    /// Ends the process `pid` at once.
    static func end(_ pid: Int32)
    /// Whether a process that ended so (by a signal or with an exit status, and that status) was ended by `end`.
    static func endedByEnd(signal: Bool, status: Int32) -> Bool
    /// This process's CPU time, user and system, in microseconds (NaN when it cannot be read).
    static func cpuMicroseconds() -> Double
    /// CLOCK_MONOTONIC in nanoseconds, or nil.
    static func monotonicNanoseconds() -> UInt64?
    /// /proc's clock ticks per second, or nil.
    static var clockTicksPerSecond: Double? { get }
}
