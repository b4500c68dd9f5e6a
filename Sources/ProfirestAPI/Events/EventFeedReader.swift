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
    /// This reader's entry among the client's running readers: its status, and its wake-up calls.
    let entry: FeedHandle
    /// The error the reading ended with (`not_paired`, a ``ProfirestUsageError``), nil while it reads or when it was
    /// cancelled: what an `events(…)` sequence throws.
    private(set) var ending: (any Error)?

    /// `entry` is the reader's handle when its owner made it first (to wake it); nil makes one.
    init(feed: EventFeed, entry: FeedHandle? = nil, streaming: @escaping @Sendable (Bool) -> Void) {
        self.feed = feed
        self.streaming = streaming
        schedule = FeedSchedule(streaming: feed.canStream, now: feed.now)
        self.entry = entry ?? feed.registry.makeHandle()
    }

    mutating func run() async {
        feed.registry.register(entry)
        defer { feed.registry.unregister(entry) }
        cursor = feed.storedCursor()
        while !Task.isCancelled {
            do {
                if cursor == nil {
                    entry.set(.connecting)
                    try await startAtEnd()
                } else if schedule.streamDue(now: feed.now) {
                    polling = false
                    entry.set(.connecting)
                    try await readStream()
                } else {
                    if !polling { feed.core.observe?(.feed(.polling)) }
                    polling = true
                    entry.set(.polling)
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
            // A reader stopped during the reload leaves the expired cursor stored, so the next one reloads again:
            // the reload may have been cut short by the same cancellation.
            try Task.checkCancellation()
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
                ending = apiError
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
        if error is ProfirestUsageError {
            ending = error
            return false
        }
        let retryAfter = (error as? ProfirestAPIError)?.retryAfter
        let delay = schedule.failed(retryAfter: retryAfter, schedule: feed.core.schedule)
        entry.set(.retrying)
        do {
            try await wait(delay)
            return true
        } catch {
            return false
        }
    }

    /// Waits with the client's `sleep`, unless a wake-up (`wakeEventFeeds()`) came before or comes meanwhile: then
    /// the reader goes on at once.
    func wait(_ seconds: TimeInterval) async throws {
        guard seconds > 0 else { return }
        if entry.takeWake() { return }
        let (sleep, entry) = (feed.core.sleep, self.entry)
        let woken = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await sleep(seconds)
                return false
            }
            group.addTask {
                try await entry.waitForWake()
                return true
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
        if woken { _ = entry.takeWake() }
        try Task.checkCancellation()
    }
}
