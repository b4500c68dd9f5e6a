import Foundation

/// The readers of one client's event feed that run now: where each stands (``EventFeedStatus``, for the client's
/// state) and how to wake them all at once (`wakeEventFeeds()`, when the app comes back to the foreground).
///
/// ```swift
/// registry.register(handle); defer { registry.unregister(handle) }
/// ```
final class FeedRegistry: Sendable {
    private let readers = Locked<[ObjectIdentifier: FeedHandle]>([:])
    /// Told when a reader starts, stops or changes its status.
    let changes: ChangeSignal

    init(changes: ChangeSignal = ChangeSignal()) {
        self.changes = changes
    }

    /// A reader's handle, not running yet.
    func makeHandle() -> FeedHandle { FeedHandle(changes: changes) }

    /// A reader starts: counted, `connecting` until it says otherwise.
    func register(_ handle: FeedHandle) {
        handle.set(.connecting)
        readers.withLock { $0[ObjectIdentifier(handle)] = handle }
        changes.notify()
    }

    func unregister(_ handle: FeedHandle) {
        _ = readers.withLock { $0.removeValue(forKey: ObjectIdentifier(handle)) }
        changes.notify()
    }

    /// The least healthy status of the readers running, `stopped` when none runs.
    var status: EventFeedStatus {
        readers.withLock { readers in
            readers.values.map(\.status).max { $0.severity < $1.severity } ?? .stopped
        }
    }

    /// Wakes every reader running now (see `FeedHandle.wake()`).
    func wakeAll() {
        let handles = readers.withLock { Array($0.values) }
        for handle in handles { handle.wake() }
    }
}

/// One running reader's entry in the `FeedRegistry`: its status, and a wake-up call that cuts its current wait short
/// or has its connection checked (`EventFeedReader.wait`, `StreamSession`).
final class FeedHandle: Sendable {
    private struct State {
        var status = EventFeedStatus.connecting
        /// A wake-up the reader has not acted on yet.
        var pending = false
        var next = 0
        var waiters: [Int: CheckedContinuation<Void, Error>] = [:]
    }

    private let state = Locked(State())
    private let changes: ChangeSignal

    init(changes: ChangeSignal) {
        self.changes = changes
    }

    var status: EventFeedStatus { state.withLock { $0.status } }

    func set(_ status: EventFeedStatus) {
        let changed = state.withLock { state -> Bool in
            defer { state.status = status }
            return state.status != status
        }
        if changed { changes.notify() }
    }

    /// Asks the reader to look at once: a wait ends now, a stream connection without a recent byte is replaced.
    func wake() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Error>] in
            state.pending = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Takes a wake-up that came: true once per `wake()` (several before the reader looked count as one).
    func takeWake() -> Bool {
        state.withLock { state in
            defer { state.pending = false }
            return state.pending
        }
    }

    /// Returns when a wake-up is pending (without taking it); throws `CancellationError` when the task is cancelled.
    func waitForWake() async throws {
        let id = state.withLock { state -> Int in
            state.next += 1
            return state.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                let resume = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resume { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }
}
