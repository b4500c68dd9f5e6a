import Foundation

/// Waiting in real time, the default of every injected `sleep` (tests pass a virtual clock's instead).
enum RealTime {
    /// Waits `seconds` on the shared `DeadlineSweeper`, and ends early (throwing `CancellationError`) when the
    /// waiting task is cancelled — taking its deadline with it then, which `Task.sleep` on Linux does not: a feed's
    /// idle watch, a stream's start deadline or a wait between attempts must not outlive what it served.
    /// Waits of zero or less only yield; absurdly long ones wait for ever instead of overflowing.
    static func sleep(_ seconds: TimeInterval) async throws {
        try await DeadlineSweeper.shared.sleep(seconds)
    }
}
