import Foundation
import XCTest
@testable import ProfirestAPI

/// Wakes whoever waits for the state of a test to change (a sleep requested, a request sent, a chunk read).
final class Changes: @unchecked Sendable {
    // @unchecked: all state is behind `lock`.
    private let lock = NSLock()
    private var version = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func signal() {
        lock.lock()
        version += 1
        let woken = waiters
        waiters = []
        lock.unlock()
        for waiter in woken { waiter.resume() }
    }

    private var current: Int {
        lock.lock()
        defer { lock.unlock() }
        return version
    }

    private func next(after seen: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if version != seen {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append(continuation)
                lock.unlock()
            }
        }
    }

    /// Waits until `condition` holds, re-checking at every change. The real-time bound only turns a broken test
    /// into a failure instead of a hang; a passing test never waits for it.
    @discardableResult
    func until(
        _ what: String, seconds: Double = 10, file: StaticString = #filePath, line: UInt = #line,
        _ condition: @escaping () -> Bool
    ) async -> Bool {
        let guardTask = Task { [weak self] in
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            self?.signal()
        }
        defer { guardTask.cancel() }
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let seen = current
            if condition() { return true }
            if Date() >= deadline {
                XCTFail("timed out waiting for \(what)", file: file, line: line)
                return false
            }
            await next(after: seen)
        }
    }
}

/// Virtual time for a client (the event feed, the staff session's timer): `sleep` suspends until the test moves the
/// clock past its end with `advance`.
final class FeedClock: @unchecked Sendable {
    // @unchecked: all state is behind `state`.
    private struct Sleeper {
        let until: TimeInterval
        let duration: TimeInterval
        let continuation: CheckedContinuation<Void, Error>
    }

    private struct State {
        var elapsed: TimeInterval = 0
        var sleepers: [Int: Sleeper] = [:]
        var requested: [TimeInterval] = []
        var next = 0
        var cancelled: Set<Int> = []
    }

    static let origin = Date(timeIntervalSince1970: 1_790_000_000)
    private let state = Locked(State())
    private let start: Date
    let changes: Changes

    init(changes: Changes, origin: Date = FeedClock.origin) {
        self.changes = changes
        start = origin
    }

    var now: Date { start.addingTimeInterval(elapsed) }
    var elapsed: TimeInterval { state.withLock { $0.elapsed } }
    /// Every wait asked for, in order.
    var requested: [TimeInterval] { state.withLock { $0.requested } }
    /// The waits under way now.
    var pending: [TimeInterval] { state.withLock { $0.sleepers.values.map(\.duration) } }

    func sleep(_ seconds: TimeInterval) async throws {
        let id: Int = state.withLock {
            $0.requested.append(seconds)
            $0.next += 1
            return $0.next
        }
        defer { changes.signal() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                let cancelled: Bool = state.withLock {
                    if $0.cancelled.remove(id) != nil { return true }
                    $0.sleepers[id] = Sleeper(until: $0.elapsed + seconds, duration: seconds, continuation: continuation)
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
                changes.signal()
            }
        } onCancel: {
            let sleeper: Sleeper? = state.withLock {
                if let sleeper = $0.sleepers.removeValue(forKey: id) { return sleeper }
                $0.cancelled.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time on and wakes every sleeper whose end has come.
    func advance(_ seconds: TimeInterval) {
        let due: [Sleeper] = state.withLock { state in
            state.elapsed += seconds
            let due = state.sleepers.filter { $0.value.until <= state.elapsed + 1e-9 }
            for key in due.keys { state.sleepers[key] = nil }
            return Array(due.values)
        }
        for sleeper in due { sleeper.continuation.resume() }
        changes.signal()
    }

    /// Waits until a sleep of `seconds` is under way, then lets it end.
    func expectSleep(_ seconds: TimeInterval, file: StaticString = #filePath, line: UInt = #line) async {
        let seen = await changes.until("a sleep of \(seconds) s (under way: \(pending))", file: file, line: line) {
            self.pending.contains { abs($0 - seconds) < 1e-6 }
        }
        if seen { advance(seconds) }
    }
}

extension FeedClock {
    /// A `sleep` that ends only when cancelled (its clock is never moved on), for tests where a background waiter
    /// such as the staff session's timer must stay out of the way.
    static var parkedSleep: @Sendable (TimeInterval) async throws -> Void {
        let clock = FeedClock(changes: Changes())
        return { try await clock.sleep($0) }
    }
}
