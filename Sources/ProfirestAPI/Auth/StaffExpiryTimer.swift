import Foundation

/// Waits for the end of one staff session on the client's clock and `sleep`, so `onStaffExpired` comes when the
/// session ends rather than at the next request (an idle register must learn to lock its screen).
///
/// One task per session, started by the sign-in; a successful request only moves the deadline under the sessions'
/// lock, and the timer finds the new one when it wakes: it re-reads the clock and sleeps again for the remainder.
/// The task holds the sessions weakly and ends when its session is gone, when it is cancelled (sign-out, a new
/// sign-in, the client deallocated) or when `sleep` throws.
struct StaffExpiryTimer: Sendable {
    let clock: @Sendable () -> Date
    let sleep: @Sendable (TimeInterval) async throws -> Void

    /// The longest single wait: a session may last hours, and a clock that jumped (the device's time set, a
    /// machine that slept) is read again at least this often. It also keeps an absurd deadline from the server
    /// within what any `sleep` can take.
    static let longestWait: TimeInterval = 3600

    /// How many wakes in a row may find the clock not moved on before the timer gives up: a `sleep` that returns
    /// at once on a clock that stands still (a test's) would otherwise spin. The next request still notices the end.
    static let stalledWakesAllowed = 3

    /// Starts watching the session of `token` in `sessions`.
    func start(token: String, in sessions: StaffSessions) -> Task<Void, Never> {
        Task { [self, weak sessions] in
            // Weak: a sleeping timer must not keep the client alive; a deallocated client has nothing to report.
            await run { now in sessions?.expireIfDue(token: token, now: now) }
        }
    }

    /// Sleeps until `check` says there is nothing more to wait for (nil), re-checking after every wake.
    private func run(check: (Date) -> TimeInterval?) async {
        var previous: Date?
        var stalled = 0
        while !Task.isCancelled {
            let now = clock()
            guard let remaining = check(now) else { return }
            if let previous, now <= previous {
                stalled += 1
                if stalled > Self.stalledWakesAllowed { return }
            } else {
                stalled = 0
            }
            previous = now
            // After a wake that found the clock where it was, wait at least a second: a coarse clock moves on then.
            let wait = min(stalled > 0 ? max(remaining, 1) : remaining, Self.longestWait)
            do { try await sleep(wait) } catch { return }
        }
    }
}
