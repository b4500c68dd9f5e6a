import Foundation

/// Waiting in real time, the default of every injected `sleep` (tests pass a virtual clock's instead).
enum RealTime {
    /// `Task.sleep`, which ends early (throwing `CancellationError`) when the waiting task is cancelled. Negative
    /// waits do not wait; absurdly long ones wait for ever instead of overflowing.
    static func sleep(_ seconds: TimeInterval) async throws {
        let nanoseconds = seconds >= Double(UInt64.max / 1_000_000_000) ? UInt64.max : UInt64(max(seconds, 0) * 1e9)
        try await Task.sleep(nanoseconds: nanoseconds)
    }
}
