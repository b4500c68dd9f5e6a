import Foundation

/// One step of an `events(…)` sequence: new events, oldest first — or, after `410 cursor_expired`, a reset that says
/// events were missed and everything shown must be loaded again.
///
/// Its cursor is stored when the loop asks for the next batch, so a batch whose handling threw or was cancelled comes
/// again (see ``EventBatches``).
///
/// ```swift
/// for try await batch in api.events(restaurantID: rid) {
///     if batch.reset != nil { await board.reloadAll() }
///     try await board.apply(batch.events)
/// }
/// ```
public struct EventBatch: Sendable {
    /// The new events, oldest first; empty in a reset.
    public let events: [Event]
    /// The `cursor_expired` error when the feed no longer reached back to the cursor, so events were missed: reload
    /// what you show; the sequence goes on from the end of the feed the error named. nil in an ordinary batch.
    public let reset: ProfirestAPIError?

    /// Makes a batch, for tests of code that consumes an `events(…)` sequence.
    ///
    /// - Parameters:
    ///   - events: the events, oldest first.
    ///   - reset: the `cursor_expired` error of a reset; nil for new events.
    ///
    /// ```swift
    /// let batch = EventBatch(events: [event])
    /// ```
    public init(events: [Event], reset: ProfirestAPIError? = nil) {
        self.events = events
        self.reset = reset
    }
}
