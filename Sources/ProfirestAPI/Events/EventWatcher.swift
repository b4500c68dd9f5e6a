import Foundation

/// Follows the event feed so that an app learns of every change once it happened: live from `GET /v2/events/stream`
/// while the server runs the stream, by polling `GET /v2/events` otherwise, always from the same stored cursor, so
/// switching between them skips nothing.
///
/// - The cursor is stored under the key `events_cursor[:restaurant][:types]` of the client's state document, and only
///   after `onEvents` returned: an event arrives at least once (process it idempotently, by `Event.id`).
/// - Without a stored cursor the reading starts at the end of the feed.
/// - `410 cursor_expired` calls `onReset`, then reads on from the end of the feed the error carried (`next_cursor`),
///   so nothing that changed after it is missed; losing the pairing ends `run()`.
///
/// ```swift
/// let watcher = api.eventWatcher(.init(restaurantID: "11", onEvents: { events in await board.apply(events) }))
/// ```
public final class EventWatcher: Sendable {
    /// What this watcher reads and the handlers it calls, as it was made with.
    public let options: Options
    let feed: EventFeed
    private let state = Locked(State())

    private struct State {
        var stopped = false
        var streaming = false
        var loop: Task<Void, Never>?
        /// The reader of the running `run()`, to wake.
        var handle: FeedHandle?
    }

    init(core: Core, options: Options, registry: FeedRegistry) {
        self.options = options
        feed = EventFeed(core: core, options: options, registry: registry)
    }

    /// Whether the live stream is connected right now (false while polling or waiting), for a "live" badge or a
    /// diagnostic.
    ///
    /// ```swift
    /// badge.isLive = watcher.isStreaming
    /// ```
    public var isStreaming: Bool { state.withLock { $0.streaming } }

    /// Reads the feed until `stop()`, the calling task is cancelled, or the pairing is lost (`not_paired`), so that
    /// one call keeps an app up to date for as long as it runs.
    ///
    /// Errors are waited out (Retry-After, or longer and longer up to 60 s) and shown to `onError`. While one `run()`
    /// reads, another call returns at once; after `stop()` it returns at once too.
    ///
    /// ```swift
    /// let reading = Task { await watcher.run() }
    /// ```
    public func run() async {
        let loop: Task<Void, Never>? = state.withLock { state in
            guard !state.stopped, state.loop == nil else { return nil }
            // A task of its own, so that `stop()` can end it from anywhere.
            let status = self.state
            let entry = feed.registry.makeHandle()
            let task = Task { [feed] in
                var reader = EventFeedReader(feed: feed, entry: entry) { live in status.withLock { $0.streaming = live } }
                await reader.run()
            }
            state.loop = task
            state.handle = entry
            return task
        }
        guard let loop else { return }
        await withTaskCancellationHandler {
            await loop.value
        } onCancel: {
            loop.cancel()
        }
        state.withLock {
            $0.loop = nil
            $0.streaming = false
            $0.handle = nil
        }
    }

    /// Has a running `run()` look at its connection now, for an app that comes back to the foreground: a wait
    /// (between polls, before a reconnection, after an error) ends at once, and a stream connection that brought no
    /// byte in the last 2 s is closed and opened again from the cursor, since a connection that died while the app
    /// was suspended says nothing until the idle limit. A connection that just brought bytes is kept. Does nothing
    /// when `run()` is not reading. ``ProfirestApi/wakeEventFeeds()`` does this for every reader of the client.
    ///
    /// ```swift
    /// if phase == .active { watcher.wake() }
    /// ```
    public func wake() {
        state.withLock { $0.handle }?.wake()
    }

    /// Reads one page of the feed and delivers it, for a scheduler that wakes the app now and then (a background
    /// refresh, cron): exactly one `GET /v2/events`, then `onEvents` with its events, then the cursor is stored.
    ///
    /// Without a stored cursor the step only stores the end of the feed.
    /// A full page is not followed — call again. After `410 cursor_expired` it calls `onReset`, then stores the end
    /// of the feed the error carried (`next_cursor`), so the next step reads on from there and nothing that changed
    /// since is missed; without one it drops the cursor and the next step starts at the end. Throws the request's
    /// error, or what `onEvents` threw (then the cursor stays and the same events come next time).
    ///
    /// ```swift
    /// try await api.eventWatcher(.init(restaurantID: rid, onEvents: { events in try await sync(events) })).once()
    /// ```
    public func once() async throws {
        let cursor = feed.storedCursor()
        do {
            let page = try await feed.page(after: cursor)
            if cursor != nil { try await feed.deliver(page.data) }
            if page.nextCursor != cursor { try await feed.store(page.nextCursor) }
        } catch let failure as HandlerFailure {
            throw failure.error
        } catch let error as ProfirestAPIError where error.code == ErrorCode.cursorExpired {
            // The expired cursor stays stored until the reload is done: if the app dies during it, the next step
            // meets the 410 again and reloads again.
            await options.onReset?(error)
            try await feed.store(EventFeed.restartCursor(of: error))
        }
    }

    /// Stops the reading from anywhere — a running `run()` returns, and a later one returns at once — while
    /// `once()` keeps working.
    public func stop() {
        let loop = state.withLock { state -> Task<Void, Never>? in
            state.stopped = true
            return state.loop
        }
        loop?.cancel()
    }
}
