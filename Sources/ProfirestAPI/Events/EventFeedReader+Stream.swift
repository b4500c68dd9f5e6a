import Foundation

extension EventFeedReader {
    /// Reads the live stream from the cursor until the connection ends, then waits as `FeedSchedule` says.
    /// A server without the stream (503, 404, or no event stream in a 200) sends the feed to polling until
    /// Retry-After; a stream whose head or first bytes do not come within the start deadline (a proxy buffers it)
    /// sends it to polling at once; a connection that could not be made or that dropped is no error.
    mutating func readStream() async throws {
        guard let start = cursor else { return }
        let opened = feed.now
        let head: HTTPStreamingResponse
        do {
            head = try await feed.openStream(after: start)
        } catch let error as ProfirestAPIError where error.status == 503 || error.status == 404 {
            schedule.streamUnavailable(retryAfter: error.retryAfter, now: feed.now)
            return
        } catch let error as ProfirestAPIError where error.code == ErrorCode.timeout {
            feed.core.observe?(.feed(.dropped))
            schedule.streamStartedTooSlowly(now: feed.now)
            return
        } catch let error as ProfirestAPIError where error.code == ErrorCode.networkError {
            feed.core.observe?(.feed(.dropped))
            try await reconnectLater(healthy: false)
            return
        }
        guard Self.isEventStream(head) else {
            // Some older server or a proxy answers 200 with something else: poll, as without the stream.
            await head.body.close()
            schedule.streamUnavailable(retryAfter: nil, now: feed.now)
            return
        }
        schedule.succeeded()
        streaming(true)
        entry.set(.live)
        feed.core.observe?(.feed(.connected))
        let heartbeat = HTTPHeaders.value("Profirest-Heartbeat", in: head.headers).flatMap(TimeInterval.init)
        let progress = Locked(StreamProgress(cursor: start, opened: opened, heartbeat: heartbeat))
        do {
            try await StreamSession(feed: feed, progress: progress, handle: entry).read(head.body)
        } catch {
            ended(progress.withLock { $0 })
            throw error
        }
        let outcome = progress.withLock { $0 }
        ended(outcome)
        if outcome.startedTooSlowly {
            schedule.streamStartedTooSlowly(now: feed.now)
            return
        }
        // Closed because the app asked for a look (`wake()`) and the connection had been quiet: open it again now,
        // not after the reconnection time — the app has just come back and wants what it missed.
        if outcome.woken { return }
        try await reconnectLater(healthy: outcome.healthy)
    }

    /// Takes over what the connection achieved, whichever way it ended.
    private mutating func ended(_ outcome: StreamProgress) {
        streaming(false)
        entry.set(.connecting)
        feed.core.observe?(.feed(.dropped))
        cursor = outcome.cursor
        if let retry = outcome.retry { schedule.serverRetry(milliseconds: retry) }
    }

    /// Waits as `FeedSchedule` says after a connection ended; the jitter's random number is the client's, which
    /// tests pin.
    mutating func reconnectLater(healthy: Bool) async throws {
        if let delay = schedule.streamDropped(healthy: healthy, unit: feed.core.schedule.random(), now: feed.now) {
            try await wait(delay)
        }
    }

    static func isEventStream(_ head: HTTPStreamingResponse) -> Bool {
        guard let type = HTTPHeaders.value("Content-Type", in: head.headers) else { return true }
        return type.lowercased().contains("text/event-stream")
    }
}

/// What one stream connection achieved, shared between its reading task and the reader.
struct StreamProgress: Sendable {
    var cursor: String
    /// When the connection was asked for: its start deadline counts from here.
    var opened: Date
    /// The server's heartbeat interval (`Profirest-Heartbeat`, seconds), which sets the idle limit.
    var heartbeat: TimeInterval?
    /// Whether any byte of the body came: the stream got through whatever is between.
    var started = false
    /// Whether it brought events or keep-alives: it was healthy, and its end is no failure.
    var healthy = false
    /// Whether it ended because its first bytes did not come within the start deadline.
    var startedTooSlowly = false
    /// Whether it ended because a wake-up found it quiet (`StreamSession.recentByte`).
    var woken = false
    /// The server's `retry` field, milliseconds.
    var retry: Int?
}

/// One connection of the live stream: reads chunks, parses events, hands them to `onEvents` and stores the
/// cursor after each batch — raced against the idle limit, which only counts time spent waiting for bytes.
struct StreamSession: Sendable {
    let feed: EventFeed
    let progress: Locked<StreamProgress>
    /// The reader's wake-ups: one that finds the connection quiet ends it (`watchWake`).
    let handle: FeedHandle

    /// A connection that brought a byte this recently counts as alive when the app wakes the feed; one quieter than
    /// this may have died while the app was suspended (no byte and no close is all a dead connection shows), and is
    /// replaced. A connection just opened is greeted by the server at once, so a second wake-up keeps it.
    static let recentByte: TimeInterval = 2

    private enum End: Sendable { case closed, idle, slowStart, woken }

    /// Returns when the connection ended, broke off, or was idle too long; throws what `onEvents`, the storage or
    /// a malformed event threw.
    func read(_ body: AsyncThrowingStream<Data, Error>) async throws {
        let activity = Locked(Activity(last: feed.now))
        do {
            try await withThrowingTaskGroup(of: End.self) { group in
                group.addTask { try await consume(body, activity: activity) }
                group.addTask { try await watchIdle(activity) }
                group.addTask { try await watchWake(activity) }
                defer { group.cancelAll() }
                switch try await group.next() {
                case .slowStart: progress.withLock { $0.startedTooSlowly = true }
                case .woken: progress.withLock { $0.woken = true }
                default: break
                }
            }
        } catch {
            // `consume` may have stopped between two reads (an error of `onEvents` or of the storage, a malformed
            // event): the connection must not outlive the session, nor `run()`.
            await body.close()
            throw error
        }
        await body.close()
    }

    private struct Activity: Sendable {
        var last: Date
        var busy = false
    }

    private func consume(_ body: AsyncThrowingStream<Data, Error>, activity: Locked<Activity>) async throws -> End {
        var parser = ServerSentEvents()
        var iterator = body.makeAsyncIterator()
        while true {
            let chunk: Data?
            do {
                chunk = try await iterator.next()
            } catch {
                // The connection broke off: not an error of the feed.
                try Task.checkCancellation()
                return .closed
            }
            guard let chunk else {
                parser.finish()
                return .closed
            }
            let now = feed.now
            activity.withLock {
                $0.last = now
                $0.busy = true
            }
            progress.withLock { $0.started = true }
            let events: [ServerSentEvent]
            do {
                events = try parser.feed(chunk)
            } catch {
                throw feed.errors.make(
                    ErrorCode.invalidResponse, status: 200, detail: "the event stream is malformed: \(error)")
            }
            let (retry, comments) = (parser.retry, parser.comments)
            progress.withLock {
                if let retry { $0.retry = retry }
                if comments > 0 || !events.isEmpty { $0.healthy = true }
            }
            try await deliver(events)
            let after = feed.now
            activity.withLock {
                $0.last = after
                $0.busy = false
            }
        }
    }

    /// Ends the connection when its first bytes have not come by the start deadline (counted from when it was asked
    /// for), and after that when it is silent past the idle limit (from the server's heartbeat, or
    /// `streamIdleTimeout`): a half-open connection never says it is gone. Time spent in `onEvents` does not count.
    private func watchIdle(_ activity: Locked<Activity>) async throws -> End {
        while true {
            let (started, opened, heartbeat) = progress.withLock { ($0.started, $0.opened, $0.heartbeat) }
            let limit = feed.options.idleLimit(heartbeat: heartbeat)
            if !started {
                let remaining = opened.addingTimeInterval(feed.options.startLimit).timeIntervalSince(feed.now)
                if remaining <= 0 { return .slowStart }
                // Looks again after at most the idle limit: once the first bytes are in, that limit counts.
                try await feed.core.sleep(min(remaining, limit))
                try Task.checkCancellation()
                continue
            }
            let (last, busy) = activity.withLock { ($0.last, $0.busy) }
            let remaining = busy ? limit : last.addingTimeInterval(limit).timeIntervalSince(feed.now)
            if remaining <= 0 { return .idle }
            try await feed.core.sleep(remaining)
            try Task.checkCancellation()
        }
    }

    /// Ends the connection when a wake-up finds it quiet: no byte for `recentByte` seconds, not in `onEvents`, and past
    /// its first bytes (a connection still within its start deadline is new). Any other connection is kept.
    private func watchWake(_ activity: Locked<Activity>) async throws -> End {
        while true {
            try await handle.waitForWake()
            _ = handle.takeWake()
            let started = progress.withLock { $0.started }
            let (last, busy) = activity.withLock { ($0.last, $0.busy) }
            if started && !busy && feed.now.timeIntervalSince(last) >= Self.recentByte { return .woken }
        }
    }

    /// Decodes the events, hands them over in batches of at most `limit`, and stores the cursor (the `id` of the
    /// last event of the batch) after each. The good events before a malformed one are delivered first.
    private func deliver(_ events: [ServerSentEvent]) async throws {
        var batch: [Event] = []
        var batchCursor: String?
        func flush() async throws {
            guard !batch.isEmpty else { return }
            try await feed.deliver(batch)
            batch.removeAll()
            if let next = batchCursor, next != progress.withLock({ $0.cursor }) {
                try await feed.store(next)
                progress.withLock { $0.cursor = next }
            }
        }
        for event in events {
            let decoded: Event
            do {
                decoded = try JSONValueDecoder.decode(Event.self, from: event.data)
            } catch {
                try await flush()
                let reason = (error as? DecodingError).map(ResponseDecoding.describe) ?? "\(error)"
                throw feed.errors.make(
                    ErrorCode.invalidResponse, status: 200,
                    detail: "the stream's event \(event.id ?? "without id") (\(event.type)) is not an Event: \(reason)")
            }
            batch.append(decoded)
            if let id = event.id, !id.isEmpty { batchCursor = id }
            if batch.count >= feed.options.pageLimit { try await flush() }
        }
        try await flush()
    }
}
