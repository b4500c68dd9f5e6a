import Foundation

/// The event feed as an asynchronous sequence of batches, for `for try await` in a task you already have (SwiftUI's
/// `.task`): the same reading as ``EventWatcher/run()`` — the live stream while the server runs it, polling
/// otherwise, one stored cursor across both — with the same promises.
///
/// - **At least once, in order.** The cursor of a batch is stored when the loop asks for the next batch, that is when
///   its body has finished without throwing and the loop goes round again. A batch whose body threw, or whose task
///   was cancelled before the loop asked again (a `break` too), is not counted as handled: the next sequence,
///   iterated now or after a restart, begins with it. Handle events idempotently, by ``Event/id``.
/// - **Reading starts with the first `next()`** (the first round of the loop), from the stored cursor, or at the end
///   of the feed without one; each iteration of the sequence is a reading of its own.
/// - **Ends with the task.** Cancelling the task, or leaving the loop, closes the connection at once.
/// - **`410 cursor_expired`** arrives as a batch whose ``EventBatch/reset`` is set (and `events` empty): reload what
///   you show; its new start is stored when the loop asks for the next batch.
/// - **Errors** are waited out as the watcher waits them out (Retry-After, or up to 60 s), shown to `onError`; the
///   sequence throws only what ends the watcher's `run()`: `not_paired` (``ProfirestAPIError``) and a
///   ``ProfirestUsageError``. Cancelled, it returns nil (the loop ends without an error).
/// - One task iterates it at a time; iterating one iterator from two tasks at once throws a ``ProfirestUsageError``.
///
/// ```swift
/// for try await batch in api.events(restaurantID: rid, types: ["order.created"]) { try await board.apply(batch.events) }
/// ```
public struct EventBatches: AsyncSequence, Sendable {
    /// Each step of the sequence: new events, or a reset.
    public typealias Element = EventBatch

    let core: Core
    let registry: FeedRegistry
    /// What to read; its handlers are replaced by each iteration's own.
    let options: EventWatcher.Options

    /// Starts an iteration: nothing is read until its first `next()`.
    ///
    /// - Returns: an iterator whose first `next()` starts reading from the stored cursor.
    public func makeAsyncIterator() -> Iterator {
        Iterator(subscription: EventSubscription(core: core, registry: registry, options: options))
    }

    /// Reads the feed for one iteration; dropping it (leaving the loop) closes the connection.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        let subscription: EventSubscription

        /// Stores the previous batch's cursor (it was handled) and waits for the next batch.
        ///
        /// - Returns: the next batch, or nil when the task was cancelled.
        /// - Throws: ``ProfirestAPIError`` `not_paired` when the pairing is lost; ``ProfirestUsageError`` when the
        ///   client cannot send (an unusable `baseURL`), or when another task is already waiting on this iterator.
        public mutating func next() async throws -> EventBatch? {
            try await subscription.next()
        }
    }
}
