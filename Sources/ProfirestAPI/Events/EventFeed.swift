import Foundation

/// What the feed reader does through the client: its two requests, the stored cursor of this subscription, and
/// the app's handlers. The reader (`EventFeedReader`) decides when; this says how.
struct EventFeed: Sendable {
    let client: FeedClient
    let options: EventWatcher.Options

    var settings: PipelineSettings { client.settings }
    var now: Date { settings.clock() }

    /// Whether this client can read the live stream at all.
    var canStream: Bool { options.stream && client.canStream }

    // MARK: The cursor, under `events_cursor[:restaurant][:types]` in the state document

    var store: StateStore { client.state }

    func storedCursor() -> String? {
        store.cursor(restaurantID: options.restaurantID, types: options.types)
    }

    func store(_ cursor: String?) async throws {
        try await store.saveCursor(cursor, restaurantID: options.restaurantID, types: options.types)
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
        return try await client.page(query, requestOptions)
    }

    /// `GET /v2/events/stream` from `cursor` (as `Last-Event-ID`).
    func openStream(after cursor: String) async throws -> HTTPStreamingResponse {
        var options = requestOptions
        options.accept = "text/event-stream"
        options.headers["Last-Event-ID"] = cursor
        options.headers["Cache-Control"] = "no-store"
        // The head must come within the start deadline; the body is then watched by the reader's idle limit.
        options.timeout = self.options.startLimit
        return try await client.openStream(filters, options, self.options.idleLimit)
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

    var errors: ErrorFactory { settings.errors() }

    /// The end of the feed that a `410 cursor_expired` carries (`next_cursor`): where to read on after reloading.
    static func restartCursor(of error: ProfirestAPIError) -> String? {
        guard let cursor = error.problem?["next_cursor"]?.stringValue, !cursor.isEmpty else { return nil }
        return cursor
    }
}

/// All the event feed may use of its client: the two feed requests, the state document holding the cursors, and
/// the settings (clock, sleep, jitter, observer). The facade makes one (`ProfirestApi.feedClient`); unit tests of
/// the feed can make their own.
struct FeedClient: Sendable {
    let settings: PipelineSettings
    /// Whether the client's transport can read a response in pieces.
    let canStream: Bool
    let state: StateStore
    /// `GET /v2/events` with the query and options given.
    let page: @Sendable (_ query: [String: QueryValue], _ options: RequestOptions) async throws -> EventPage
    /// `GET /v2/events/stream`, its head once the server answered; `idleTimeout` is the reader's idle limit.
    let openStream: @Sendable (_ query: [String: QueryValue], _ options: RequestOptions, _ idleTimeout: TimeInterval)
        async throws -> HTTPStreamingResponse
}

/// An error thrown by `onEvents`: the events come again.
struct HandlerFailure: Error {
    let error: any Error
}
