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
        EventWatcher(core: core, options: options)
    }

    /// What the event feed may use of this client, and nothing more.
}
