// Test-only: what the tests use to steer the WinSDK shims and to read what the library did with them. Everything here
// is per thread, so a test sees only the calls it made itself, whatever runs beside it.
import Foundation

/// Per-thread state of the WinSDK shims: failures to inject, the calls made, and the memory counts.
/// Usage: `let counts = WindowsShimThread.counts`
public final class WindowsShimThread {
    var faults: [String: DWORD] = [:]
    /// Faults that apply to `count` calls only, after `skip` calls that work.
    var countedFaults: [String: (code: DWORD, skip: Int, count: Int)] = [:]
    var trace: [String]? = nil
    /// What Sleep was asked for, in order (the shim does not sleep).
    var sleeps: [DWORD] = []
    /// Runs at each Sleep with how many there have been.
    var onSleep: ((Int) -> Void)? = nil
    var allocations = 0
    var frees = 0
    var invalidFrees = 0
    var invalidDescriptorUses = 0

    static var current: WindowsShimThread {
        let key = "WindowsShims.thread"
        if let state = Thread.current.threadDictionary[key] as? WindowsShimThread { return state }
        let state = WindowsShimThread()
        Thread.current.threadDictionary[key] = state
        return state
    }

    /// Called first by every shim function: records the call and returns the error code to fail with, if any.
    static func enter(_ function: String) -> DWORD? {
        let state = current
        state.trace?.append(function)
        if let counted = state.countedFaults[function] {
            if counted.skip > 0 {
                state.countedFaults[function] = (counted.code, counted.skip - 1, counted.count)
            } else {
                state.countedFaults[function] = counted.count > 1 ? (counted.code, 0, counted.count - 1) : nil
                return counted.code
            }
        }
        return state.faults[function]
    }

    /// What this thread's calls have allocated and freed so far.
    public struct Counts: Equatable, Sendable {
        /// Blocks handed out by ConvertSidToStringSidW and ConvertStringSecurityDescriptorToSecurityDescriptorW.
        public var allocations: Int
        /// Of those, freed with LocalFree.
        public var frees: Int
        /// LocalFree calls with memory that was not live (freed twice, or never from these APIs).
        public var invalidFrees: Int
        /// CreateFileW calls whose security descriptor pointer was not live memory from
        /// ConvertStringSecurityDescriptorToSecurityDescriptorW.
        public var invalidDescriptorUses: Int
    }

    /// Usage: `let before = WindowsShimThread.counts`
    public static var counts: Counts {
        let state = current
        return Counts(
            allocations: state.allocations, frees: state.frees, invalidFrees: state.invalidFrees,
            invalidDescriptorUses: state.invalidDescriptorUses)
    }

    /// Runs `body` with every call of the named shim functions on this thread failing with the given Windows error
    /// code. Usage: `try WindowsShimThread.failing(["OpenProcessToken": 5]) { try TokenFile.replace(…) }`
    public static func failing<T>(_ faults: [String: DWORD], _ body: () throws -> T) rethrows -> T {
        let state = current
        let saved = state.faults
        state.faults.merge(faults) { $1 }
        defer { state.faults = saved }
        return try body()
    }

    /// Runs `body` with `count` calls of `function` on this thread failing with the Windows error `code` — the first
    /// ones, or those after the first `skipping` — and the others working.
    /// Usage: `try WindowsShimThread.failing("MoveFileExW", 3, with: 32) { … }`
    public static func failing<T>(
        _ function: String, _ count: Int, with code: DWORD, skipping: Int = 0, _ body: () throws -> T
    ) rethrows -> T {
        let state = current
        let saved = state.countedFaults
        state.countedFaults[function] = count > 0 ? (code, skipping, count) : nil
        defer { state.countedFaults = saved }
        return try body()
    }

    /// Runs `body` and returns the waits Sleep was asked for on this thread meanwhile, in milliseconds; `onSleep` runs at
    /// each, given how many there have been. Usage: `let waits = WindowsShimThread.sleeping { try TokenFile.replace(…) }`
    public static func sleeping(onSleep: ((Int) -> Void)? = nil, _ body: () throws -> Void) rethrows -> [DWORD] {
        let state = current
        let (saved, savedHook) = (state.sleeps, state.onSleep)
        state.sleeps = []
        state.onSleep = onSleep
        defer { (state.sleeps, state.onSleep) = (saved, savedHook) }
        try body()
        return state.sleeps
    }

    /// Runs `body` and returns the names of the shim functions it called on this thread, in order, and what it threw.
    /// Usage: `let (calls, error) = WindowsShimThread.tracing { try TokenFile.replace(…) }`
    public static func tracing(_ body: () throws -> Void) -> (calls: [String], error: (any Error)?) {
        let state = current
        let saved = state.trace
        state.trace = []
        defer { state.trace = saved }
        do {
            try body()
            return (state.trace ?? [], nil)
        } catch {
            return (state.trace ?? [], error)
        }
    }
}
