import Foundation

// The event feed (Events/): `watchEvents` reads in the background, `eventWatcher` hands out the reader itself
// for `run()`, `once()`, `stop()` and `isStreaming`.

extension ProfirestApi {
    /// Starts reading the event feed in the background; cancel the task to stop. See ``EventWatcher`` for the rules.
    ///
    /// - Parameter options: what to read (restaurant, event types) and what to do with it (`onEvents`, `onReset`,
    ///   `onError`).
    /// - Returns: the task that reads until it is cancelled.
    ///
    /// ```swift
    /// let feed = api.watchEvents(.init(restaurantID: rid, onEvents: { _ in await reloadBoard() })); feed.cancel()
    /// ```
    public func watchEvents(_ options: EventWatcher.Options) -> Task<Void, Never> {
        let watcher = eventWatcher(options)
        return Task { await watcher.run() }
    }

    /// A reader of the event feed to drive yourself: `run()`, `once()`, `stop()`, `isStreaming`.
    ///
    /// - Parameter options: what to read (restaurant, event types) and what to do with it (`onEvents`, `onReset`,
    ///   `onError`).
    /// - Returns: a reader that has not started yet.
    ///
    /// ```swift
    /// try await api.eventWatcher(.init(restaurantID: rid, onEvents: { events in try await sync(events) })).once()
    /// ```
    public func eventWatcher(_ options: EventWatcher.Options) -> EventWatcher {
        EventWatcher(core: core, options: options, registry: feeds)
    }

    /// The event feed as an asynchronous sequence, for `for try await` in a task you already have (SwiftUI's
    /// `.task`): the same reading as ``watchEvents(_:)``, with the same promises (see ``EventBatches``).
    ///
    /// The cursor of a batch is stored when the loop asks for the next batch — its body finished without throwing —
    /// so a batch whose body threw, or whose task was cancelled first, comes again at the start of the next sequence.
    /// Reading starts with the loop's first round and ends with it.
    ///
    /// - Parameters:
    ///   - restaurantID: reads only this restaurant's events; nil reads all the connection may see.
    ///   - types: reads only these event types (the wire values of ``EventType``); empty reads all.
    ///   - onError: sees every error the reading waits out, for a log or a status line.
    ///   - stream: whether to read the live stream when the server runs it; false only polls.
    ///   - streamIdleTimeout: how many seconds the stream may stay silent before it is opened again, 45 by default.
    ///   - interval: how many seconds polling waits after a page that was not full, 5 by default.
    ///   - limit: how many events one polled page asks for, 1…100.
    ///   - streamStartTimeout: how many seconds a new stream connection may take to prove itself before the feed
    ///     polls instead, 10 by default.
    /// - Returns: the batches, in order; a reset after `410 cursor_expired` is a batch of its own
    ///   (``EventBatch/reset``). Iterating it throws ``ProfirestAPIError`` `not_paired` when the pairing is lost and
    ///   ``ProfirestUsageError`` when the client cannot send; every other error is waited out.
    ///
    /// ```swift
    /// for try await batch in api.events(restaurantID: rid) { try await board.apply(batch.events) }
    /// ```
    public func events(
        restaurantID: String? = nil, types: [String] = [], onError: (@Sendable (any Error) async -> Void)? = nil,
        stream: Bool = true, streamIdleTimeout: TimeInterval = 45, interval: TimeInterval = 5, limit: Int = 100,
        streamStartTimeout: TimeInterval = 10
    ) -> EventBatches {
        // The handlers are each iteration's own (EventHandoff); these are never called.
        let options = EventWatcher.Options(
            restaurantID: restaurantID, types: types, onEvents: { _ in }, onError: onError, stream: stream,
            streamIdleTimeout: streamIdleTimeout, interval: interval, limit: limit, streamStartTimeout: streamStartTimeout)
        return EventBatches(core: core, registry: feeds, options: options)
    }

    /// Has every reader of this client's event feed look at its connection now — call it when the app comes back
    /// to the foreground (`scenePhase == .active`) or at a background refresh. A connection that died while the app
    /// was suspended shows nothing (no byte and no close) until the idle limit runs out, up to 45 s.
    ///
    /// Each running reader (`watchEvents`, ``EventWatcher/run()``, an `events(…)` sequence) then goes on at once: a
    /// wait — between polls, before reconnecting, after an error — ends now; a stream connection that brought no byte
    /// in the last 2 s is closed and opened again from the cursor at once, so what happened meanwhile arrives within
    /// moments; one that just brought bytes is kept. Returns at once; does nothing when no reader runs.
    ///
    /// ```swift
    /// .onChange(of: scenePhase) { _, phase in if phase == .active { api.wakeEventFeeds() } }
    /// ```
    public func wakeEventFeeds() {
        feeds.wakeAll()
    }
}
