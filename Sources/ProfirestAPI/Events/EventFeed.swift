import Foundation

/// What the feed reader does through the client's core: its two requests, the stored cursor of this subscription,
/// and the app's handlers. The reader (`EventFeedReader`) decides when; this says how.
struct EventFeed: Sendable {
    let core: Core
    let options: EventWatcher.Options
    /// The client's running readers, where a reader says how it stands and is woken.
    let registry: FeedRegistry

    var now: Date { core.clock() }

    /// Whether this client can read the live stream at all.
    var canStream: Bool { options.stream && core.canStream }

    // MARK: The cursor, under `events_cursor[:restaurant][:types]` in the state document

    var store: StateStore { core.store }

    func storedCursor() -> String? {
        store.cursor(restaurantID: options.restaurantID, types: options.types)
    }

    /// Stores the cursor after its batch was handled. When the storage refuses, the cursor is still the one this
    /// process goes on from (kept in memory and written again by the store); `onError` hears of it, and the batch
    /// is not handed out again.
    func store(_ cursor: String?) async throws {
        let (store, restaurantID, types) = (self.store, options.restaurantID, options.types)
        do {
            try await Self.inOwnTask { try await store.saveCursor(cursor, restaurantID: restaurantID, types: types) }
        } catch let error as StorageError {
            await report(error)
        }
    }

    /// Runs `work` in a child task of its own. A task keeps the most memory its async frames ever took for as long as
    /// it lives (the task allocator reuses its slabs, never frees them), and a feed's tasks live for days: a request's
    /// frames (the retry loop, the attempt, the token) are about 12 KB, which a thousand feeds would each keep. In a
    /// child task they are freed when the request is done. Cancellation reaches the child as usual.
    static func inOwnTask<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask(operation: work)
            guard let result = try await group.next() else { throw CancellationError() }
            return result
        }
    }

    // MARK: Requests

    /// The filters both endpoints take.
    private var filters: [String: QueryValue] {
        var query: [String: QueryValue] = [:]
        if !options.types.isEmpty { query["types"] = .list(options.types) }
        if let restaurantID = options.restaurantID { query["restaurant_id"] = .string(restaurantID) }
        return query
    }

    /// The feed never sends the staff token: each successful request would extend the employee's session, and
    /// a feed that reads all day would keep it open for ever.
    private var requestOptions: RequestOptions { RequestOptions(staff: .none) }

    /// `GET /v2/events`: the page after `cursor`, or without one the (empty) page at the end of the feed.
    func page(after cursor: String?) async throws -> EventPage {
        var query = filters
        query["limit"] = .int(options.pageLimit)
        if let cursor { query["cursor"] = .string(cursor) }
        let (core, request) = (core, ProfirestRequest("GET", "/events", query: query, options: requestOptions, as: EventPage.self))
        return try await Self.inOwnTask { try await core.send(request) }
    }

    /// `GET /v2/events/stream` from `cursor` (as `Last-Event-ID`), in a task of its own (`inOwnTask`).
    func openStream(after cursor: String) async throws -> HTTPStreamingResponse {
        var options = requestOptions
        options.accept = "text/event-stream"
        options.headers["Last-Event-ID"] = cursor
        options.headers["Cache-Control"] = "no-store"
        // The head must come within the start deadline; the body is then watched by the reader's idle limit.
        options.timeout = self.options.startLimit
        let request = ProfirestRequest("GET", "/events/stream", query: filters, options: options, as: JSONValue?.self)
        let outgoing = try request.outgoing(base: try core.base.get(), language: core.language, now: core.clock())
        let (core, policy, idle) = (core, SendPolicy.stream(options), self.options.idleLimit)
        return try await Self.inOwnTask { try await core.openStream(outgoing, policy: policy, idleTimeout: idle) }
    }

    // MARK: The app's handlers

    /// Calls `onEvents`; what it throws comes back wrapped, so the reader never mistakes it for its own errors
    /// (an app's `not_paired` from another request must not be read as the feed's).
    func deliver(_ events: [Event]) async throws {
        guard !events.isEmpty else { return }
        do {
            try await options.onEvents(events)
        } catch {
            throw HandlerFailure(error: error)
        }
    }

    /// Shows an error to `onError`: the app's own error as it threw it.
    func report(_ error: any Error) async {
        guard let onError = options.onError else { return }
        if let failure = error as? HandlerFailure {
            await onError(failure.error)
        } else {
            await onError(error)
        }
    }

    var errors: ErrorFactory { core.errors() }

    /// The end of the feed that a `410 cursor_expired` carries (`next_cursor`): where to read on after reloading.
    static func restartCursor(of error: ProfirestAPIError) -> String? {
        guard let cursor = error.problem?["next_cursor"]?.stringValue, !cursor.isEmpty else { return nil }
        return cursor
    }
}

/// An error thrown by `onEvents`: the events come again.
struct HandlerFailure: Error {
    let error: any Error
}
