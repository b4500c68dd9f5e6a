import Foundation
import ProfirestAPI

/// Time that passes only when the test says so: hand ``now`` and ``sleep(_:)`` to `ProfirestApi.Options` (`clock`,
/// `sleep`) and every wait of the client — retries, the outbox's backoff, the event feed's pauses, a staff session's
/// end — waits for ``advance(_:)`` instead of the wall clock, so a test of an hour's behaviour runs in milliseconds.
///
/// A sleep ends when the clock has been moved to or past its end; a cancelled sleep throws `CancellationError` at
/// once, as `Task.sleep` does. ``ProfirestTestServer`` makes one of its own and gives it to the clients it builds.
///
/// ```swift
/// let clock = VirtualClock()
/// let api = ProfirestApi(options: .init(accessToken: "t", transport: server, clock: { clock.now },
///                                       sleep: { try await clock.sleep($0) }))
/// await clock.waitForSleep()      // the client waits for something …
/// clock.advance(30)               // … and its 30 s pass now
/// ```
public final class VirtualClock: Sendable {
    private struct Sleeper {
        let id: Int
        let until: TimeInterval
        let continuation: CheckedContinuation<Void, Error>
    }

    private struct State {
        var elapsed: TimeInterval = 0
        var sleepers: [Sleeper] = []
        var nextID = 0
        var cancelledBeforeParking: Set<Int> = []
        var requested: [TimeInterval] = []
    }

    /// Where a clock starts unless told: 2026-11-29 07:58:00 UTC, a morning at the restaurant.
    public static let defaultStart = Date(timeIntervalSince1970: 1_795_939_080)

    private let start: Date
    private let state = Locked(State())

    /// A clock standing at `start` until it is advanced.
    ///
    /// - Parameter start: the time ``now`` answers before the first ``advance(_:)``.
    public init(start: Date = VirtualClock.defaultStart) {
        self.start = start
    }

    /// The current virtual time: `start` plus every ``advance(_:)`` so far. Pass `{ clock.now }` as `clock`.
    public var now: Date { start.addingTimeInterval(elapsed) }

    /// How far the clock has been advanced since it started, in seconds.
    public var elapsed: TimeInterval { state.withLock { $0.elapsed } }

    /// Every wait asked of ``sleep(_:)`` so far, in order (the seconds asked, not the time they took).
    public var requestedSleeps: [TimeInterval] { state.withLock { $0.requested } }

    /// The waits under way now, as the seconds each still has to go, shortest first.
    public var pendingSleeps: [TimeInterval] {
        state.withLock { state in state.sleepers.map { $0.until - state.elapsed }.sorted() }
    }

    /// Suspends the caller until the clock has been advanced `seconds` past now: pass `{ try await clock.sleep($0) }`
    /// as the client's `sleep`.
    ///
    /// - Parameter seconds: how long to wait in virtual time; zero or less returns at once.
    /// - Throws: `CancellationError` when the calling task is cancelled first.
    public func sleep(_ seconds: TimeInterval) async throws {
        try Task.checkCancellation()
        let id: Int = state.withLock {
            $0.requested.append(seconds)
            $0.nextID += 1
            return $0.nextID
        }
        if seconds <= 0 { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                let cancelled: Bool = state.withLock { state in
                    if state.cancelledBeforeParking.remove(id) != nil { return true }
                    state.sleepers.append(Sleeper(id: id, until: state.elapsed + seconds, continuation: continuation))
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let sleeper: Sleeper? = state.withLock { state in
                if let index = state.sleepers.firstIndex(where: { $0.id == id }) { return state.sleepers.remove(at: index) }
                state.cancelledBeforeParking.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock `seconds` on and wakes every sleep whose end has come, earliest end first.
    ///
    /// - Parameter seconds: how far to move; the clock never goes back.
    public func advance(_ seconds: TimeInterval) {
        let due: [Sleeper] = state.withLock { state in
            state.elapsed += max(0, seconds)
            let elapsed = state.elapsed
            let due = state.sleepers.filter { $0.until <= elapsed + 1e-9 }.sorted { $0.until < $1.until }
            state.sleepers.removeAll { $0.until <= elapsed + 1e-9 }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits until at least `count` sleeps are under way — the client has reached its wait — so that the test's next
    /// ``advance(_:)`` ends it rather than passing before it began.
    ///
    /// - Parameters:
    ///   - count: how many sleeps must be under way at once.
    ///   - limit: real seconds after which it gives up; only a broken test waits that long.
    /// - Returns: true when the sleeps were under way, false when `limit` passed first.
    @discardableResult
    public func waitForSleep(count: Int = 1, limit: TimeInterval = 10) async -> Bool {
        let deadline = Date().addingTimeInterval(limit)
        while true {
            if state.withLock({ $0.sleepers.count }) >= count { return true }
            if Date() >= deadline { return false }
            // A sleep starts on another task: look again after a moment of real time (no virtual time passes).
            await Task.yield()
            try? await Task.sleep(nanoseconds: 500_000)
        }
    }
}
