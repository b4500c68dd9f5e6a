import Foundation

// The client's state as one value (`state`) and as a stream of changes (`stateChanges`): every part that changes by
// itself — the state store, the staff sessions, the outboxes, the feed's readers — calls the client's one
// `ChangeSignal`; each stream recomputes the value then and passes it on when it differs from the last it gave.

extension ProfirestApi {
    /// The client's state now: pairing, staff session, outbox, event feed.
    ///
    /// ```swift
    /// if api.state.feed != .live { showCatchingUp() }
    /// ```
    public var state: ProfirestState {
        let snapshot = core.store.snapshot
        let now = core.clock()
        // Read without expiring: the session's own timer drops it on time and signals the change.
        let staff = identity.staffSessions.currentInfo.flatMap { $0.expiresAt > now ? $0 : nil }
        return ProfirestState(
            isPaired: isPaired, restaurantID: snapshot.restaurantID, deviceID: snapshot.deviceID,
            scopes: snapshot.scopes, staff: staff, outbox: outboxes.status, feed: feeds.status)
    }

    /// The client's state, the current one first, then each change as it happens, in order — for a task that
    /// updates a screen, or for ``ProfirestStateModel``.
    ///
    /// A new value comes only when something in it differs from the last one; a change made while the consumer
    /// is busy is kept, all of them in order. Each access makes a stream of its own; it ends when its task is
    /// cancelled or the loop is left. The staff session's end counts as a change when it is due (its timer runs on
    /// the client's clock), so a register shows "signed out" without a request.
    ///
    /// ```swift
    /// for await state in api.stateChanges { title = state.staff?.name ?? "Signed out" }
    /// ```
    public var stateChanges: AsyncStream<ProfirestState> {
        AsyncStream { continuation in
            let follower = StateFollower(continuation: continuation)
            let token = changes.listen { [weak self] in
                guard let self else { return }
                follower.offer { self.state }
            }
            continuation.onTermination = { [changes] _ in changes.stopListening(token) }
            follower.offer { self.state }
        }
    }
}

/// One `stateChanges` stream: reads the state after each signal and yields it when it differs from the last one.
///
/// One caller at a time reads (the drainer); a signal that comes meanwhile — from another thread, or from the read
/// itself (the first read of the storage signals) — only marks the state as stale, and the drainer reads again. So
/// states come out in the order they were read, the last one read after the last signal, and no lock is held while
/// the state is read.
final class StateFollower: Sendable {
    private struct Progress {
        var last: ProfirestState?
        var stale = false
        var draining = false
    }

    private let continuation: AsyncStream<ProfirestState>.Continuation
    private let progress = Locked(Progress())

    init(continuation: AsyncStream<ProfirestState>.Continuation) {
        self.continuation = continuation
    }

    func offer(_ read: () -> ProfirestState) {
        let drain = progress.withLock { progress -> Bool in
            progress.stale = true
            guard !progress.draining else { return false }
            progress.draining = true
            return true
        }
        guard drain else { return }
        while true {
            let go = progress.withLock { progress -> Bool in
                guard progress.stale else {
                    progress.draining = false
                    return false
                }
                progress.stale = false
                return true
            }
            guard go else { return }
            let state = read()
            progress.withLock { progress in
                guard state != progress.last else { return }
                progress.last = state
                continuation.yield(state)
            }
        }
    }
}

/// The outboxes opened through one client (held weakly: an outbox the app let go of no longer counts), for
/// ``ProfirestState/outbox``.
final class OutboxList: Sendable {
    private struct Entry {
        weak var outbox: Outbox?
    }

    private let entries = Locked<[Entry]>([])

    func add(_ outbox: Outbox) {
        entries.withLock { entries in
            entries.removeAll { $0.outbox == nil }
            entries.append(Entry(outbox: outbox))
        }
    }

    /// All open outboxes together: their counts added, the oldest write's time, a failure of any; nil when none.
    var status: OutboxStatus? {
        let open = entries.withLock { $0.compactMap(\.outbox) }
        guard !open.isEmpty else { return nil }
        let statuses = open.map(\.status)
        return OutboxStatus(
            count: statuses.reduce(0) { $0 + $1.count },
            oldestEnqueuedAt: statuses.compactMap(\.oldestEnqueuedAt).min(),
            lastFailure: statuses.lazy.compactMap(\.lastFailure).first)
    }
}
