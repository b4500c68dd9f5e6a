import Foundation

/// The loop behind `EventWatcher.run()`: start at the end of the feed when there is no cursor, read the live
/// stream when it is due, poll otherwise, and wait out errors — until cancelled or the pairing is lost.
///
/// Every wait goes through the client's `sleep` and every time is the client's `clock`, so tests drive it in
/// virtual time. The cursor moves (in memory and in the storage) only after `onEvents` returned.
struct EventFeedReader {
    let feed: EventFeed
    /// Tells the watcher whether the stream is connected now (`isStreaming`).
    let streaming: @Sendable (Bool) -> Void
    var schedule: FeedSchedule
    var cursor: String?
    /// A `cursor_expired` whose `onReset` is still to be called, once the new start is known.
    var pendingReset: ProfirestAPIError?
    /// Whether the last read was a poll, so the observer hears of a switch to polling once.
    var polling = false

    init(feed: EventFeed, streaming: @escaping @Sendable (Bool) -> Void) {
        self.feed = feed
        self.streaming = streaming
        schedule = FeedSchedule(streaming: feed.canStream, now: feed.now)
    }

    mutating func run() async {
        cursor = feed.storedCursor()
        while !Task.isCancelled {
            do {
                if cursor == nil {
                    try await startAtEnd()
                } else if schedule.streamDue(now: feed.now) {
                    polling = false
                    try await readStream()
                } else {
                    if !polling { feed.core.observe?(.feed(.polling)) }
                    polling = true
                    try await poll()
                }
            } catch {
                guard await handle(error) else { return }
            }
        }
    }

    /// Without a cursor: the position at the end of the feed — after a reset the one its error carried
    /// (`next_cursor`), otherwise the empty first page's. After a reset, `onReset` runs between learning the new
    /// start and storing it, so a reload that did not finish (the app died) is not skipped: the old, expired
    /// cursor is still stored and leads to another reset.
    mutating func startAtEnd() async throws {
        let start: String
        if let reset = pendingReset, let restart = EventFeed.restartCursor(of: reset) {
            start = restart
        } else {
            start = try await feed.page(after: nil).nextCursor
        }
        if let reset = pendingReset {
            pendingReset = nil
            await feed.options.onReset?(reset)
        }
        try await feed.store(start)
        cursor = start
        schedule.succeeded()
    }

    /// One page of `GET /v2/events`; a full page is followed at once, otherwise after `interval`.
    mutating func poll() async throws {
        let page = try await feed.page(after: cursor)
        try await feed.deliver(page.data)
        if page.nextCursor != cursor {
            try await feed.store(page.nextCursor)
            cursor = page.nextCursor
        }
        schedule.succeeded()
        if !page.hasMore {
            try await wait(schedule.pollWait(interval: feed.options.pollInterval, now: feed.now))
        }
    }

    /// Decides what an error means. Returns false when the reading ends.
    mutating func handle(_ error: any Error) async -> Bool {
        if error is CancellationError || Task.isCancelled { return false }
        if let apiError = error as? ProfirestAPIError {
            switch apiError.code {
            case ErrorCode.notPaired:
                await feed.report(apiError)
                return false
            case ErrorCode.cursorExpired:
                // Start again from the end. The expired cursor stays stored until `onReset` has returned (see
                // `startAtEnd`): an app that dies during the reload meets the 410 again and reloads again.
                pendingReset = apiError
                cursor = nil
                return true
            default:
                break
            }
        }
        await feed.report(error)
        // Misuse (an unusable baseURL, a token over plain http) does not get better by waiting.
        if error is ProfirestUsageError { return false }
        let retryAfter = (error as? ProfirestAPIError)?.retryAfter
        let delay = schedule.failed(retryAfter: retryAfter, schedule: feed.core.schedule)
        do {
            try await wait(delay)
            return true
        } catch {
            return false
        }
    }

    func wait(_ seconds: TimeInterval) async throws {
        guard seconds > 0 else { return }
        try await feed.core.sleep(seconds)
        try Task.checkCancellation()
    }
}
