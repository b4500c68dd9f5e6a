import Foundation

/// A durable queue of writes for a device that may be offline: each write is journaled to a file before it is
/// first sent and leaves the file only with the server's definitive answer, so it happens exactly once through
/// outages, app kills and restarts.
///
/// - A write goes out at once when nothing older waits; otherwise behind the older ones, in order.
/// - No definitive answer (no network, a timeout, 5xx, 429 `rate_limited`, `idempotency_in_progress`, an expired
///   pairing) keeps it queued; `run()` sends again after Retry-After or a growing delay, and `flush()` does so on
///   demand. Which failures keep a write is one rule (`SendPolicy.keepsWriteWaiting`), on the error catalog's retryable column.
/// - A refusal for good (any other 4xx, `staff_locked` included) removes it: the caller who handed it in gets the
///   error, a write sent later goes to `onFailure`. It never blocks the writes behind it.
/// - Requests are sent again with the same bytes and Idempotency-Key (the server remembers a key for 24 hours);
///   punches keep their own id and `occurred_at` and go in batches of at most 100 with a result per punch, each
///   batch with its own Idempotency-Key kept in the journal, so a batch goes again as the same bytes under the same
///   key until the server answered it.
/// - Writes go without a staff token: a punch carries its credential, so a queued write never depends on a staff
///   session that ended meanwhile. Nothing here is ever written with a staff token; PINs leave the file with
///   their punch.
///
/// ```swift
/// let outbox = try api.outbox(path: "pichacka-outbox.json")
/// let delivering = Task { await outbox.run() }     // delivers what waits, until cancelled
/// switch try await outbox.punch(restaurantID: rid, punch) {
/// case .delivered: say("OK")
/// case .queued: say("saved offline, \(outbox.status.count) waiting")
/// }
/// ```
public final class Outbox: Sendable {
    let core: Core
    let journal: OutboxJournal
    let capacity: Int
    let onFailure: (@Sendable (OutboxFailure) -> Void)?
    /// One delivery at a time, in the order they were asked for (`OutboxDelivery`).
    let delivering = OwnedLock()
    let state = Locked(State())

    struct State {
        /// Outcomes of writes whose caller waits for them, by item id, until the caller takes them.
        var outcomes: [String: Result<JSONValue?, ProfirestAPIError>] = [:]
        var awaited: Set<String> = []
        var lastFailure: ProfirestAPIError?
        /// `run()` waiting for something to send.
        var wake: CheckedContinuation<Void, Never>?
        /// Rounds in a row that ended without a definitive answer (the backoff's exponent).
        var failedRounds = 0
        /// When the writes may go again after the last such round, and whether the server set that time
        /// (Retry-After: then a new write waits too) or the backoff did (then a new write is tried at once).
        var retryAt: Date?
        var retryAtIsServers = false
        /// Counts such rounds, so `run()` waits once for each.
        var failures = 0
    }

    /// The longest Retry-After the outbox waits for before sending again: an hour.
    static let longestRetryAfter: TimeInterval = 3600

    init(
        core: Core, path: String, capacity: Int, onFailure: (@Sendable (OutboxFailure) -> Void)?,
        hooks: OutboxJournal.TestHooks = OutboxJournal.TestHooks()
    ) throws {
        self.core = core
        self.journal = try OutboxJournal(path: path, hooks: hooks)
        self.capacity = max(1, capacity)
        self.onFailure = onFailure
    }

    /// The writes waiting, oldest first, without their bodies — for a screen that lists what is not sent yet.
    public var items: [OutboxItem] { journal.snapshot.map(\.item) }

    /// How many writes wait, since when, and the last failure, for a status line or a health check.
    ///
    /// ```swift
    /// label.text = outbox.status.count == 0 ? "All sent" : "\(outbox.status.count) waiting"
    /// ```
    public var status: OutboxStatus {
        OutboxStatus(
            count: journal.count, oldestEnqueuedAt: journal.first?.enqueuedAt,
            lastFailure: state.withLock { $0.lastFailure })
    }

    /// Keeps a POST of a model in the journal until the server answered it for good, so that it happens once even
    /// through outages and restarts; sends it at once when nothing older waits.
    ///
    /// `path` is relative to `/v2`. The body is encoded once; every attempt sends these bytes with `idempotencyKey`
    /// (a new one when nil — keep your own with the record if you may hand the same write in again after a restart).
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/customers`).
    ///   - body: a model, sent as JSON.
    ///   - idempotencyKey: the Idempotency-Key for every attempt, 1–255 characters; nil makes a new one.
    /// - Returns: `.delivered` with the server's answer when it was sent at once, or `.queued` with the waiting item
    ///   when no definitive answer came (it goes out later).
    /// - Throws: ``ProfirestAPIError`` when the server refused the write for good (such as `validation_failed`; it is
    ///   no longer queued), or `outbox_full` when the outbox is at its capacity (nothing was queued);
    ///   ``ProfirestUsageError`` when the path or key is wrong or the key is already in the outbox (nothing was
    ///   queued); `EncodingError` when the model cannot be encoded; ``StorageError`` when the journal cannot be read or
    ///   written.
    ///
    /// ```swift
    /// let outcome = try await outbox.post("/customers", body: customer)
    /// ```
    public func post<B: Encodable>(_ path: String, body: B, idempotencyKey: String? = nil) async throws -> OutboxOutcome {
        // Encoded once, straight to the bytes every attempt sends (sorted keys: the same model, the same bytes).
        let json = try JSONCoding.encode(body)
        return try await post(path, body: .data(json, contentType: "application/json"), idempotencyKey: idempotencyKey)
    }

    /// Keeps a POST with a literal, JSON or raw body in the journal until the server answered it for good, as the
    /// variant for models does.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/customers`).
    ///   - body: a dictionary or array literal (sent as JSON), or `.data` or `.text` with a content type.
    ///   - idempotencyKey: the Idempotency-Key for every attempt, 1–255 characters; nil makes a new one.
    /// - Returns: `.delivered` with the server's answer when it was sent at once, or `.queued` with the waiting item
    ///   when no definitive answer came (it goes out later).
    /// - Throws: ``ProfirestAPIError`` when the server refused the write for good (such as `validation_failed`; it is
    ///   no longer queued), or `outbox_full` when the outbox is at its capacity (nothing was queued);
    ///   ``ProfirestUsageError`` when the path or key is wrong or the key is already in the outbox (nothing was
    ///   queued); ``StorageError`` when the journal cannot be read or written.
    ///
    /// ```swift
    /// try await outbox.post("/customers", body: ["name": "Jana Nováková"])
    /// ```
    public func post(_ path: String, body: RequestBody, idempotencyKey: String? = nil) async throws -> OutboxOutcome {
        let key = idempotencyKey ?? UUIDv7.make(now: Date())
        try Self.check(path: path)
        guard (1...255).contains(key.count) else {
            throw ProfirestUsageError("an Idempotency-Key is 1–255 characters; \"\(key.prefix(20))…\" has \(key.count)")
        }
        let (data, contentType) = try body.encoded()
        let entry = JournalEntry(
            id: key, kind: OutboxItem.Kind.request.rawValue, path: path, restaurantID: nil, body: data,
            contentType: contentType, enqueuedAt: core.clock(), attempts: 0, lastErrorCode: nil)
        return try await submit(entry)
    }

    /// Keeps an attendance punch in the journal until the server recorded it, so that a clock-in made while the
    /// network is down still counts, at the time it was made.
    ///
    /// The punch keeps its id and `occurred_at` (now, by the client's clock, when not set) and goes at once when
    /// nothing older waits; queued punches go in batches to `…/attendance/punches/batch`. It needs its `credential`:
    /// it is sent without a staff session.
    ///
    /// - Parameters:
    ///   - restaurantID: the restaurant the punch is for.
    ///   - punch: the punch, with its UUID `id`, `type` and `credential`; `occurredAt` is set to now when nil.
    /// - Returns: `.delivered` with the recorded punch when it was sent at once, or `.queued` with the waiting item
    ///   when no definitive answer came (it goes out later).
    /// - Throws: ``ProfirestAPIError`` when the server refused the write for good (such as `validation_failed`; it is
    ///   no longer queued), or `outbox_full` when the outbox is at its capacity (nothing was queued);
    ///   ``ProfirestUsageError`` when the punch has no UUID id, an unknown type, no credential, or is already in the
    ///   outbox (nothing was queued); ``StorageError`` when the journal cannot be read or written.
    ///
    /// ```swift
    /// try await outbox.punch(restaurantID: rid, AttendancePunchCreate(id: ProfirestApi.uuid(), type: "clock_in", credential: c))
    /// ```
    public func punch(restaurantID: String, _ punch: AttendancePunchCreate) async throws -> OutboxOutcome {
        var punch = punch
        guard UUID(uuidString: punch.id) != nil else {
            throw ProfirestUsageError("a punch's id is a UUID (ProfirestApi.uuid()), not \"\(punch.id.prefix(40))\"")
        }
        // Checked here, against the contract, rather than by the server at replay: a bad punch found only then could
        // no longer be put right by the person who made it.
        guard AttendancePunchType.knownValues.contains(AttendancePunchType(rawValue: punch.type)) else {
            throw ProfirestUsageError("a punch's type is one of clock_in, clock_out, break_start, break_end, not \"\(punch.type.prefix(40))\"")
        }
        guard let credential = punch.credential else {
            throw ProfirestUsageError("a queued punch needs its credential (the PIN or card): it is sent without a staff session")
        }
        guard StaffCredentialMethod.knownValues.contains(StaffCredentialMethod(rawValue: credential.method)),
            (1...64).contains(credential.secret.count)
        else {
            throw ProfirestUsageError("a punch's credential is a method pin or card with a secret of 1–64 characters")
        }
        guard !restaurantID.isEmpty, !restaurantID.contains("/") else {
            throw ProfirestUsageError("restaurantID \"\(restaurantID)\" is not a restaurant id")
        }
        if punch.occurredAt == nil { punch.occurredAt = core.clock() }
        let entry = JournalEntry(
            id: punch.id, kind: OutboxItem.Kind.punch.rawValue, path: "/restaurants/\(restaurantID)/attendance/punches",
            restaurantID: restaurantID, body: try JSONCoding.encode(punch), contentType: "application/json",
            enqueuedAt: core.clock(), attempts: 0, lastErrorCode: nil)
        return try await submit(entry)
    }

    /// Sends what waits now, in order, until the queue is empty or a write gets no definitive answer, for a
    /// `BGAppRefreshTask` or a cron job that has a moment of network; returns the status afterwards. It does not
    /// wait out the outbox's own backoff — it is the app asking now — but sends nothing while the server's
    /// Retry-After holds (the status then shows the writes still waiting).
    ///
    /// ```swift
    /// let status = await outbox.flush()
    /// ```
    @discardableResult
    public func flush() async -> OutboxStatus {
        await delivering.withAsyncLock {
            if !self.heldByServer() { await self.deliver() }
        }
        return status
    }

    /// Keeps delivering whatever waits, now and whenever a write is queued later, until the task is cancelled — the
    /// one call an app makes at start so that queued writes go out as soon as the network is back.
    ///
    /// After a write got no definitive answer — here, in `flush()` or when it was handed in — it waits per
    /// Retry-After (at most an hour) or a doubling delay (from the client's `retryDelay` up to 30 s, ±25 %), with the
    /// client's `sleep`, before it sends again.
    ///
    /// ```swift
    /// let delivering = Task { await outbox.run() }
    /// ```
    public func run() async {
        var waitedFor = -1
        while !Task.isCancelled {
            let (failures, retryAt) = state.withLock { ($0.failures, $0.retryAt) }
            if let retryAt, failures != waitedFor {
                // Once for each failed round: a round that fails while this waits is waited for in turn.
                waitedFor = failures
                let wait = retryAt.timeIntervalSince(core.clock())
                if wait > 0 {
                    do { try await core.sleep(wait) } catch { return }
                }
                continue
            }
            // A round that failed while this waited for the lock (a write handed in, a `flush()`) is waited for
            // first: its Retry-After holds from its own attempt on.
            let waited = waitedFor
            let delivered = await delivering.withAsyncLock { () -> Bool in
                if self.state.withLock({ $0.failures != waited && $0.retryAt != nil }) { return false }
                await self.deliver()
                return true
            }
            if !delivered { continue }
            let after = status
            if after.count == 0 {
                await waitForWork()
                continue
            }
            if state.withLock({ $0.failures }) == failures {
                // Writes wait but the round recorded no failure (the journal could not be written, say): back off all
                // the same rather than spin.
                noteFailedRound(retryAfter: nil)
            }
        }
    }

    // MARK: - Internals

    private static func check(path: String) throws {
        guard path.hasPrefix("/"), !path.hasPrefix("//"), !path.contains("://") else {
            throw ProfirestUsageError("an outbox write goes to a path relative to /v2 such as /customers, not \"\(path.prefix(60))\"")
        }
    }

    /// Journals `entry`, delivers in order, and tells the caller what became of it.
    private func submit(_ entry: JournalEntry) async throws -> OutboxOutcome {
        _ = try core.base.get()
        let capacity = self.capacity
        let errorFactory = core.errors()
        try journal.add(entry) { journal in
            if journal.slots[entry.id] != nil {
                throw ProfirestUsageError("\"\(entry.id)\" is already in the outbox; a write is handed in once")
            }
            guard journal.slots.count < capacity else {
                throw errorFactory.make(
                    ErrorCode.outboxFull, status: 0,
                    detail: "the outbox holds \(journal.slots.count) writes, its capacity; nothing was queued — flush it or raise capacity")
            }
        }
        core.observe?(.outbox(.enqueued(id: entry.id)))
        core.store.changes.notify()
        _ = state.withLock { $0.awaited.insert(entry.id) }
        defer { _ = state.withLock { $0.awaited.remove(entry.id) } }
        await delivering.withAsyncLock {
            // The server's Retry-After holds new writes back too; a delay of the outbox's own does not.
            if !self.heldByServer() { await self.deliver() }
        }
        if let outcome = state.withLock({ $0.outcomes.removeValue(forKey: entry.id) }) {
            switch outcome {
            case .success(let answer): return .delivered(answer)
            case .failure(let error): throw error
            }
        }
        if let waiting = journal.entry(id: entry.id) {
            // run() sends it when the wait the failure set is over.
            wakeRunner()
            return .queued(waiting.item)
        }
        // Settled by another process sharing the journal: its answer went there.
        switch journal.settlement(of: entry.id) {
        case .refused(let refusal)?:
            throw core.errors().make(
                refusal.code, status: refusal.status,
                detail: "refused when another process sharing this outbox file sent it")
        case .delivered?, nil:
            return .delivered(nil)
        }
    }

    /// Whether the server's Retry-After still holds the writes back.
    private func heldByServer() -> Bool {
        let now = core.clock()
        return state.withLock { state in
            guard state.retryAtIsServers, let retryAt = state.retryAt else { return false }
            return retryAt > now
        }
    }

    /// A round ended without a definitive answer: the next one waits per the server's Retry-After, or the backoff.
    func noteFailedRound(retryAfter: Int?) {
        let schedule = core.schedule
        let now = core.clock()
        state.withLock { state in
            let wait = schedule.roundWait(
                retryAfter: retryAfter, round: state.failedRounds, longestRetryAfter: Self.longestRetryAfter)
            state.failedRounds += 1
            state.failures += 1
            state.retryAt = now.addingTimeInterval(wait)
            state.retryAtIsServers = retryAfter != nil
        }
    }

    /// A write was settled: the server answers again, so nothing holds the others back any more.
    func noteSettledRound() {
        state.withLock { state in
            state.failedRounds = 0
            state.retryAt = nil
            state.retryAtIsServers = false
        }
    }

    private func waitForWork() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if journal.count > 0 || Task.isCancelled { return true }
                    state.wake = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            wakeRunner()
        }
    }

    func wakeRunner() {
        state.withLock { state in
            let wake = state.wake
            state.wake = nil
            return wake
        }?.resume()
    }
}
