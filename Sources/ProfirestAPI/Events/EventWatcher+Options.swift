import Foundation

extension EventWatcher {
    /// Chooses what an ``EventWatcher`` reads and what it does with it; every option but `onEvents` has the default the
    /// reference gives.
    ///
    /// ```swift
    /// let options = EventWatcher.Options(restaurantID: "11", types: ["order.created"], onEvents: { events in await board.apply(events) })
    /// ```
    public struct Options: Sendable {
        /// Reads only this restaurant's events, for a partner connection that reaches several; nil reads all the
        /// connection may see.
        public var restaurantID: String?
        /// Reads only these event types (the wire values, such as `"order.created"` or
        /// `EventType.orderCreated.rawValue`), so that an app is not woken for changes it does not show; empty reads
        /// all.
        public var types: [String]
        /// Handles each batch of new events, oldest first — the one place an app applies what changed.
        ///
        /// The cursor moves past the batch only after it returns; if it throws, the same events come again after a
        /// wait, so handle them idempotently (by `Event.id`).
        ///
        /// ```swift
        /// onEvents: { events in for event in events { try await board.apply(event) } }
        /// ```
        public var onEvents: @Sendable ([Event]) async throws -> Void
        /// Tells the app to reload everything it shows after `410 cursor_expired`, when events were missed because
        /// the feed no longer reaches back to the cursor; reading then goes on from the point the error names.
        public var onReset: (@Sendable (ProfirestAPIError) async -> Void)?
        /// Sees every error the reading waits out or ends with (an error thrown by `onEvents` as it was thrown), for a
        /// log or a status line; a dropped stream connection is no error.
        public var onError: (@Sendable (any Error) async -> Void)?
        /// Whether to read the live stream (`GET /v2/events/stream`) when the server runs it; false polls
        /// `GET /v2/events` only, for networks whose proxies hold streamed answers back.
        public var stream: Bool
        /// How long the stream may stay silent before the connection counts as dead and is opened again with the
        /// cursor. The server sends a keep-alive every 15 s and says so in the `Profirest-Heartbeat` header; when it
        /// does, a silence of twice its interval plus 2 s is enough (a half-open connection is noticed that soon).
        public var streamIdleTimeout: TimeInterval
        /// How long a new stream connection may take to prove itself — its head and its first bytes (the server
        /// sends them at once) — before the feed polls instead and tries the stream again later. A proxy that buffers
        /// the stream would otherwise hold every event back.
        public var streamStartTimeout: TimeInterval
        /// How long polling waits before asking again after a page that was not full.
        public var interval: TimeInterval
        /// How many events one polled page asks for, 1…100 (a larger value is read as 100).
        public var limit: Int

        /// Makes the options of a watcher; give at least `onEvents`, and `restaurantID` and `types` to narrow what it
        /// reads.
        ///
        /// - Parameters:
        ///   - restaurantID: reads only this restaurant's events; nil reads all the connection may see.
        ///   - types: reads only these event types (the wire values of ``EventType``); empty reads all.
        ///   - onEvents: handles each batch of new events, oldest first; the cursor moves past a batch only when this
        ///     returns without throwing.
        ///   - onReset: called after `410 cursor_expired`, when events were missed: reload what you show.
        ///   - onError: sees every error the reading waits out or ends with, for a log or a status line.
        ///   - stream: whether to read the live stream when the server runs it; false only polls.
        ///   - streamIdleTimeout: how many seconds the stream may stay silent before it is opened again, 45 by default.
        ///   - interval: how many seconds polling waits after a page that was not full, 5 by default.
        ///   - limit: how many events one polled page asks for, 1…100.
        ///   - streamStartTimeout: how many seconds a new stream connection may take to prove itself before the feed
        ///     polls instead, 10 by default.
        ///
        /// ```swift
        /// EventWatcher.Options(restaurantID: rid, types: ["order.created"], onEvents: { _ in await reload() })
        /// ```
        public init(
            restaurantID: String? = nil, types: [String] = [],
            onEvents: @escaping @Sendable ([Event]) async throws -> Void,
            onReset: (@Sendable (ProfirestAPIError) async -> Void)? = nil,
            onError: (@Sendable (any Error) async -> Void)? = nil,
            stream: Bool = true, streamIdleTimeout: TimeInterval = 45, interval: TimeInterval = 5, limit: Int = 100,
            streamStartTimeout: TimeInterval = 10
        ) {
            self.restaurantID = restaurantID
            self.types = types
            self.onEvents = onEvents
            self.onReset = onReset
            self.onError = onError
            self.stream = stream
            self.streamIdleTimeout = streamIdleTimeout
            self.interval = interval
            self.limit = limit
            self.streamStartTimeout = streamStartTimeout
        }

        /// Makes the options of a watcher with the types written as ``EventType`` constants.
        ///
        /// - Parameters:
        ///   - restaurantID: reads only this restaurant's events; nil reads all the connection may see.
        ///   - types: reads only these event types; empty reads all.
        ///   - onEvents: handles each batch of new events, oldest first; the cursor moves past a batch only when this
        ///     returns without throwing.
        ///   - onReset: called after `410 cursor_expired`, when events were missed: reload what you show.
        ///   - onError: sees every error the reading waits out or ends with, for a log or a status line.
        ///   - stream: whether to read the live stream when the server runs it; false only polls.
        ///   - streamIdleTimeout: how many seconds the stream may stay silent before it is opened again, 45 by default.
        ///   - interval: how many seconds polling waits after a page that was not full, 5 by default.
        ///   - limit: how many events one polled page asks for, 1…100.
        ///   - streamStartTimeout: how many seconds a new stream connection may take to prove itself before the feed
        ///     polls instead, 10 by default.
        @available(
            *, deprecated,
            message: "use init(restaurantID:types:onEvents:…) with wire values, such as [EventType.orderCreated.rawValue]"
        )
        public init(
            restaurantID: String? = nil, types: [EventType],
            onEvents: @escaping @Sendable ([Event]) async throws -> Void,
            onReset: (@Sendable (ProfirestAPIError) async -> Void)? = nil,
            onError: (@Sendable (any Error) async -> Void)? = nil,
            stream: Bool = true, streamIdleTimeout: TimeInterval = 45, interval: TimeInterval = 5, limit: Int = 100,
            streamStartTimeout: TimeInterval = 10
        ) {
            self.init(
                restaurantID: restaurantID, types: types.map(\.rawValue), onEvents: onEvents, onReset: onReset,
                onError: onError, stream: stream, streamIdleTimeout: streamIdleTimeout, interval: interval, limit: limit,
                streamStartTimeout: streamStartTimeout)
        }

        /// The page size sent: the reference allows at most 100.
        var pageLimit: Int { min(max(limit, 1), 100) }

        /// The idle limit used: a zero, negative or non-finite value would end every connection at once (or never),
        /// so it reads as the default.
        var idleLimit: TimeInterval { streamIdleTimeout.isFinite && streamIdleTimeout > 0 ? streamIdleTimeout : 45 }

        /// The idle limit of a stream whose server announced its heartbeat interval: twice that plus 2 s, never more
        /// than `idleLimit`.
        func idleLimit(heartbeat: TimeInterval?) -> TimeInterval {
            guard let heartbeat, heartbeat.isFinite, heartbeat > 0 else { return idleLimit }
            return min(idleLimit, 2 * heartbeat + 2)
        }

        /// The start deadline used: a zero, negative or non-finite value reads as the default.
        var startLimit: TimeInterval { streamStartTimeout.isFinite && streamStartTimeout > 0 ? streamStartTimeout : 10 }

        /// The wait between polls used: a negative or non-finite value reads as the default; zero polls back to back.
        var pollInterval: TimeInterval { interval.isFinite && interval >= 0 ? interval : 5 }
    }
}
