import Foundation

/// One iteration of an `events(…)` sequence: the iterator owns it, and when the iterator goes (the loop ended) the
/// reading is cancelled and its connection closed.
final class EventSubscription: Sendable {
    private let handoff: EventHandoff

    init(core: Core, registry: FeedRegistry, options: EventWatcher.Options) {
        handoff = EventHandoff(core: core, registry: registry, options: options)
    }

    deinit {
        handoff.cancel()
    }

    func next() async throws -> EventBatch? {
        try await handoff.next()
    }
}

/// Hands the batches of one `EventFeedReader` (the watcher's loop, unchanged) to the loop that iterates the sequence,
/// one at a time: the reader's `onEvents` (and `onReset`) gives the batch to the waiting `next()` and then waits
/// until the consumer calls `next()` again, which is the acknowledgement; only then does `onEvents` return and the
/// reader store the cursor. A cancelled reading makes the waiting `onEvents` throw, so the cursor stays.
final class EventHandoff: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var started = false
        var cancelled = false
        /// A batch the reader gives, waiting for the consumer to take it, with the reader's acknowledgement.
        var offered: (batch: EventBatch, ack: CheckedContinuation<Void, Error>)?
        /// The acknowledgement of the batch the consumer took last: resumed by its next `next()`.
        var taken: CheckedContinuation<Void, Error>?
        /// The consumer waiting in `next()`.
        var consumer: CheckedContinuation<EventBatch?, Error>?
        /// How the reading ended (an error, or nil once cancelled); handed out once, then `next()` answers nil.
        var end: (any Error)??
    }

    private let state = Locked(State())
    private let core: Core
    private let registry: FeedRegistry
    private let options: EventWatcher.Options

    init(core: Core, registry: FeedRegistry, options: EventWatcher.Options) {
        self.core = core
        self.registry = registry
        self.options = options
    }

    private enum Step {
        case deliver(EventBatch)
        case finish((any Error)?)
        case wait
        case misuse
    }

    func next() async throws -> EventBatch? {
        // Asked from a cancelled task, the previous batch does not count as handled.
        if Task.isCancelled {
            cancel()
            return nil
        }
        startIfNeeded()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (consumer: CheckedContinuation<EventBatch?, Error>) in
                let (ack, step) = state.withLock { state -> (CheckedContinuation<Void, Error>?, Step) in
                    let ack = state.taken
                    state.taken = nil
                    if state.consumer != nil { return (ack, .misuse) }
                    if let offered = state.offered {
                        state.offered = nil
                        state.taken = offered.ack
                        return (ack, .deliver(offered.batch))
                    }
                    if let end = state.end {
                        state.end = .some(nil)
                        return (ack, .finish(end))
                    }
                    if state.cancelled { return (ack, .finish(nil)) }
                    state.consumer = consumer
                    return (ack, .wait)
                }
                // The consumer asks for more: the batch it took last was handled, and its cursor may be stored.
                ack?.resume()
                switch step {
                case .deliver(let batch): consumer.resume(returning: batch)
                case .finish(let error?): consumer.resume(throwing: error)
                case .finish(nil): consumer.resume(returning: nil)
                case .wait: break
                case .misuse:
                    consumer.resume(
                        throwing: ProfirestUsageError("an events(…) iterator is iterated by one task at a time"))
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Starts the reader on the first `next()`.
    private func startIfNeeded() {
        state.withLock { state in
            guard !state.started, !state.cancelled else { return }
            state.started = true
            var options = self.options
            // The handoff holds the reader's task, and the task holds the handoff through these handlers, until the
            // subscription's end cancels the task (which then lets go of both).
            options.onEvents = { [self] events in try await offer(EventBatch(events: events)) }
            options.onReset = { [self] error in try? await offer(EventBatch(events: [], reset: error)) }
            let feed = EventFeed(core: core, options: options, registry: registry)
            state.task = Task { [self] in
                var reader = EventFeedReader(feed: feed) { _ in }
                await reader.run()
                finish(reader.ending)
            }
        }
    }

    /// The reader's side: gives `batch` to the consumer and returns when the consumer asks for the next one; throws
    /// `CancellationError` when the reading is cancelled first.
    private func offer(_ batch: EventBatch) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (ack: CheckedContinuation<Void, Error>) in
                let (refused, consumer) = state.withLock { state -> (Bool, CheckedContinuation<EventBatch?, Error>?) in
                    if state.cancelled { return (true, nil) }
                    if let consumer = state.consumer {
                        state.consumer = nil
                        state.taken = ack
                        return (false, consumer)
                    }
                    state.offered = (batch, ack)
                    return (false, nil)
                }
                if refused { ack.resume(throwing: CancellationError()) }
                consumer?.resume(returning: batch)
            }
        } onCancel: {
            let acks = state.withLock { state -> [CheckedContinuation<Void, Error>] in
                defer {
                    state.offered = nil
                    state.taken = nil
                }
                return [state.offered?.ack, state.taken].compactMap { $0 }
            }
            for ack in acks { ack.resume(throwing: CancellationError()) }
        }
    }

    /// The reader ended by itself (`not_paired`, a usage error) or after a cancellation (nil).
    private func finish(_ error: (any Error)?) {
        let consumer = state.withLock { state -> CheckedContinuation<EventBatch?, Error>? in
            state.task = nil
            defer { state.consumer = nil }
            // Handed to the consumer waiting now, or kept for its next call; either way only once.
            state.end = .some(state.consumer == nil ? error : nil)
            return state.consumer
        }
        if let error {
            consumer?.resume(throwing: error)
        } else {
            consumer?.resume(returning: nil)
        }
    }

    /// Ends the reading: its connection closes, a batch waiting is not acknowledged, a consumer waiting gets nil.
    func cancel() {
        let (task, consumer, acks) = state.withLock {
            state -> (Task<Void, Never>?, CheckedContinuation<EventBatch?, Error>?, [CheckedContinuation<Void, Error>]) in
            state.cancelled = true
            defer {
                state.consumer = nil
                state.offered = nil
                state.taken = nil
            }
            return (state.task, state.consumer, [state.offered?.ack, state.taken].compactMap { $0 })
        }
        task?.cancel()
        for ack in acks { ack.resume(throwing: CancellationError()) }
        consumer?.resume(returning: nil)
    }
}
