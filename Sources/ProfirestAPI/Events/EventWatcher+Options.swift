import Foundation

extension EventWatcher {
    /// What to read from the event feed and what to do with it. The defaults are the reference's.
    ///
    /// ```swift
    /// let options = EventWatcher.Options(restaurantID: "11", types: ["order.created"], onEvents: { events in await board.apply(events) })
    /// ```
    public struct Options: Sendable {
        /// Only this restaurant's events (a partner connection may reach several); nil = all the connection reaches.
        /// Usage: `options.restaurantID = "11"`
        public var restaurantID: String?
        /// Only these event types (see ``EventType``); empty = all. Usage: `options.types = ["order.created"]`
        public var types: [String]
        /// Called with each batch of new events, oldest first. The cursor moves past them only after it returns;
        /// if it throws, the same events come again after a wait, so handle them idempotently (by `Event.id`).
        /// Usage: `onEvents: { events in for e in events { await board.apply(e) } }`
        public var onEvents: @Sendable ([Event]) async throws -> Void
        /// Called after `410 cursor_expired` (the feed was gone past the cursor): reload your state. Reading then
        /// goes on from the end of the feed. Usage: `onReset: { _ in await board.reloadAll() }`
        public var onReset: (@Sendable (ProfirestAPIError) async -> Void)?
        /// Sees every error the reading waits out or ends with (an error thrown by `onEvents` as it was thrown);
        /// a dropped stream connection is no error. Usage: `onError: { error in log("feed: \(error)") }`
        public var onError: (@Sendable (any Error) async -> Void)?
        /// Read the live stream (`GET /v2/events/stream`) when the server runs it; false = poll `GET /v2/events` only.
        /// Usage: `options.stream = false`
        public var stream: Bool
        /// No byte from the stream for this long means the connection is dead (the server sends a keep-alive
        /// every 15 s). Usage: `options.streamIdleTimeout = 60`
        public var streamIdleTimeout: TimeInterval
        /// The wait between two polls when the last page was not full. Usage: `options.interval = 10`
        public var interval: TimeInterval
        /// Events per page when polling, 1…100 (a larger value is read as 100). Usage: `options.limit = 50`
        public var limit: Int

        /// Usage: `EventWatcher.Options(restaurantID: rid, types: ["order.created"], onEvents: { _ in await reload() })`
        public init(
            restaurantID: String? = nil, types: [String] = [],
            onEvents: @escaping @Sendable ([Event]) async throws -> Void,
            onReset: (@Sendable (ProfirestAPIError) async -> Void)? = nil,
            onError: (@Sendable (any Error) async -> Void)? = nil,
            stream: Bool = true, streamIdleTimeout: TimeInterval = 45, interval: TimeInterval = 5, limit: Int = 100
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
        }

        /// The same with the generated constants for the types.
        /// Usage: `EventWatcher.Options(restaurantID: rid, types: [.orderCreated, .orderStatusChanged], onEvents: { _ in })`
        public init(
            restaurantID: String? = nil, types: [EventType],
            onEvents: @escaping @Sendable ([Event]) async throws -> Void,
            onReset: (@Sendable (ProfirestAPIError) async -> Void)? = nil,
            onError: (@Sendable (any Error) async -> Void)? = nil,
            stream: Bool = true, streamIdleTimeout: TimeInterval = 45, interval: TimeInterval = 5, limit: Int = 100
        ) {
            self.init(
                restaurantID: restaurantID, types: types.map(\.rawValue), onEvents: onEvents, onReset: onReset,
                onError: onError, stream: stream, streamIdleTimeout: streamIdleTimeout, interval: interval, limit: limit)
        }

        /// The page size sent: the reference allows at most 100.
        var pageLimit: Int { min(max(limit, 1), 100) }

        /// The idle limit used: a zero, negative or non-finite value would end every connection at once (or never),
        /// so it reads as the default.
        var idleLimit: TimeInterval { streamIdleTimeout.isFinite && streamIdleTimeout > 0 ? streamIdleTimeout : 45 }

        /// The wait between polls used: a negative or non-finite value reads as the default; zero polls back to back.
        var pollInterval: TimeInterval { interval.isFinite && interval >= 0 ? interval : 5 }
    }
}
