import Foundation

/// The one place that reads and writes a connection's `StoredState`.
///
/// Every write re-reads the document inside the storage lock (`LockingTokenStorage.withAsyncLock`, which holds
/// `withLock` where a storage has nothing else), so a change made by another process in the meantime is never
/// overwritten by a stale copy. Storages without a lock of their own are serialized within this process by a lock per storage key.
/// Async callers wait for a lock suspended, never on a thread of their own (see `exclusive`).
///
/// A lock-protected copy of the last document read or written serves the synchronous readers (`isPaired`,
/// `restaurantID`, …) without touching the storage. The generation counter lets long operations notice that the
/// connection changed under them (an `unpair()` or a new pairing) while they were waiting.
///
/// ```swift
/// let store = StateStore(storage: MemoryTokenStorage(), key: "profirest-api:profirest-pos")
/// ```
final class StateStore: Sendable {
    let storage: any TokenStorage
    let key: String
    private let cache = Locked(Cache())
    /// Told when state first cannot be written (with the error) and when it finally was (nil).
    private let onUnsavedChange: (@Sendable (StorageError?) -> Void)?
    /// Waits between the writes of unsaved state; real time unless a test drives it.
    private let sleep: @Sendable (TimeInterval) async throws -> Void
    /// Told after the document this process uses was read or replaced (the client's state may have changed).
    let changes: ChangeSignal

    private struct Cache {
        /// The newest document this process knows: the storage's, or one it could not write yet.
        var state: StoredState?
        var generation: UInt64 = 0
        /// State the storage does not have yet, because writing it failed.
        var unsaved: Unsaved?
        /// Why the storage could not be read, while nothing is known of it.
        var readFailure: StorageError?
        /// Whether a task writing the unsaved state again is running.
        var retrying = false
        /// What the unsaved connection came from (a consent's `state`), so that completing it again finds it.
        var unsavedConnection: String?
        /// The storage's text last read or written here and the document it decodes to (see `Parsed`).
        var parsed: Parsed?
        /// How many texts of the storage were parsed (tests look at it).
        var parses = 0
        /// How many writes replaced cursors in the text before instead of encoding the document (tests look at it).
        var cursorReplacements = 0
    }

    /// A text of the storage and exactly what `StoredState.decode` makes of it, so that reading the same text again
    /// (a feed storing its cursor after every batch reads what it wrote last) costs a comparison instead of a parse.
    /// The storage is still read on every access: a text another process or client wrote is never answered from here.
    private struct Parsed {
        var text: String
        var state: StoredState
        /// Also `text == state.encoded()`: a document that differs from `state` in its cursors alone then encodes to
        /// a text that decodes to exactly that document (members are written and read one by one, cursors are plain
        /// strings), so it needs no parse to be known.
        var isCanonical: Bool
    }

    /// A document that could not be written: what it was written over (`base`, the storage's document then), and
    /// why it failed.
    private struct Unsaved {
        var state: StoredState
        var base: StoredState
        var error: StorageError
    }

    /// Serializes writers of storages that have no lock of their own, per key, within this process.
    private static let fallbackLocks = OwnedLockTable()

    /// The longest wait between two writes of unsaved state.
    static let maxRetryInterval: TimeInterval = 30

    init(
        storage: any TokenStorage, key: String, onUnsavedChange: (@Sendable (StorageError?) -> Void)? = nil,
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = RealTime.sleep,
        changes: ChangeSignal = ChangeSignal()
    ) {
        self.storage = storage
        self.key = key
        self.onUnsavedChange = onUnsavedChange
        self.sleep = sleep
        self.changes = changes
    }

    /// The default storage key of a client: `profirest-api:<client_id>`.
    static func defaultKey(clientID: String) -> String { "profirest-api:" + clientID }

    /// Where errors say the problem is; the key names the connection, never its content.
    var location: String { "storage key \(key)" }

    // MARK: Synchronous readers

    /// The last known document, loaded on first use; empty while the storage cannot be read (these readers cannot
    /// throw: `known` tells the two apart, and `read()` and every write throw the `StorageError`).
    var snapshot: StoredState { (try? known.get()) ?? StoredState() }

    /// The last known document, loaded on first use, or why the storage cannot be read. Read again on every access
    /// until it could be read once: an unreadable storage (a locked keychain at a background launch) is never taken
    /// for an empty one.
    var known: Result<StoredState, StorageError> {
        if let state = cache.withLock({ $0.state }) { return .success(state) }
        do {
            return .success(try read())
        } catch let error as StorageError {
            return .failure(error)
        } catch {
            return .failure(StorageError(kind: .unreadable, path: location, reason: "\(error)"))
        }
    }

    /// The storage problem the state lives with now: it could not be read, or its newest version could not be
    /// written (that version is kept in memory, used, and written again). nil when the storage has it all.
    var problem: StorageError? {
        cache.withLock { $0.unsaved?.error ?? ($0.state == nil ? $0.readFailure : nil) }
    }

    /// Whether state is waiting in memory for a successful write.
    var hasUnsaved: Bool { cache.withLock { $0.unsaved != nil } }

    /// How many texts read from the storage had to be parsed; the others were the text last read or written here.
    var parses: Int { cache.withLock { $0.parses } }

    /// How many writes were made by replacing cursors in the text written before (see `cursorsReplaced`).
    var cursorReplacements: Int { cache.withLock { $0.cursorReplacements } }

    /// Bumped whenever the connection is replaced or forgotten; compare before and after an `await`.
    var generation: UInt64 { cache.withLock { $0.generation } }

    /// Marks the start of a new connection (or its end), so that work begun for the old one is discarded.
    @discardableResult
    func bumpGeneration() -> UInt64 {
        cache.withLock { c in
            c.generation &+= 1
            return c.generation
        }
    }

    /// The stored event feed cursor of a subscription (see `StoredState.cursorKey(restaurantID:types:)`).
    func cursor(restaurantID: String?, types: [String]) -> String? {
        snapshot.eventsCursor[StoredState.cursorKey(restaurantID: restaurantID, types: types)]
    }

    /// Stores (or with nil removes) the cursor of a subscription, after its page was processed.
    func saveCursor(_ cursor: String?, restaurantID: String?, types: [String]) async throws {
        let key = StoredState.cursorKey(restaurantID: restaurantID, types: types)
        try await updateKeeping { $0.eventsCursor[key] = cursor }
    }

    // MARK: Storage access

    /// Reads the document afresh from the storage, for the paths that must see another process's change (the
    /// snapshot may be older).
    func read() throws -> StoredState {
        try reconcile(loadFromStorage())
    }

    /// Writes the state that waits in memory, if any, under the lock; throws the `StorageError` while it still
    /// cannot be written.
    func saveUnsaved() async throws {
        guard hasUnsaved else { return }
        try await exclusive { access in
            let state = try await access.read()
            if self.hasUnsaved { try await access.write(state) }
        }
    }

    /// Changes the document under the storage lock, re-reading it inside the lock first; writes only when the
    /// transform changed something. Blocks while another holder has the lock — possibly a refresh waiting on the
    /// network — so async code uses `updateAsync`. Only the synchronous `authorizationURL` uses this one.
    @discardableResult
    func update<T>(_ transform: (inout StoredState) throws -> T) throws -> T {
        if let locking = storage as? any LockingTokenStorage {
            return try locking.withLock(key) { try change(transform) }
        }
        let lock = try unheldFallbackLock()
        lock.acquire()
        defer { lock.release() }
        return try change(transform)
    }

    /// One read-modify-write of `update`, inside the lock; writes only when the transform changed the document.
    private func change<T>(_ transform: (inout StoredState) throws -> T) throws -> T {
        let stored = try loadFromStorage()
        var state = try reconcile(stored)
        let before = state
        let result = try transform(&state)
        if state != before || hasUnsaved { try save(state, over: stored) }
        return result
    }

    /// Like `update`, from async code: waits for the lock without blocking a thread (see `exclusive`).
    @discardableResult
    func updateAsync<T: Sendable>(_ transform: @escaping @Sendable (inout StoredState) throws -> T) async throws -> T {
        try await exclusive { access in
            var state = try await access.read()
            let before = state
            let result = try transform(&state)
            if state != before || self.hasUnsaved { try await access.write(state) }
            return result
        }
    }

    /// Like `updateAsync`, for what the server told and this process must not forget (a cursor, the connection's
    /// details): when the storage cannot be locked or read, the change is made to the last document known and kept
    /// in memory (written once the storage can take it); the `StorageError` is thrown either way.
    func updateKeeping(_ transform: @escaping @Sendable (inout StoredState) -> Void) async throws {
        let reached = Locked(false)
        do {
            try await exclusive { access in
                var state = try await access.read()
                reached.withLock { $0 = true }
                let before = state
                transform(&state)
                if state != before || self.hasUnsaved { try await access.write(state) }
            }
        } catch let error as StorageError where !reached.withLock({ $0 }) {
            guard case .success(var state) = known else { throw error }
            let base = state
            transform(&state)
            if state != base { keep(state, over: base, because: error, origin: nil) }
            throw error
        }
    }

    /// Stores a new connection (a finished pairing or consent) and bumps the generation, both inside the lock:
    /// whoever sees the new generation also finds the new tokens, and a refresh of the old connection that held
    /// the lock before us is overwritten rather than overwriting us. When the write fails the new connection is
    /// still the one this process uses (kept in memory and written again) and the `StorageError` is thrown.
    /// `origin` names what the connection came from (a consent's `state`): see `unsavedConnection(from:)`.
    @discardableResult
    func replaceConnection<T: Sendable>(
        from origin: String? = nil, _ transform: @escaping @Sendable (inout StoredState) throws -> T
    ) async throws -> T {
        let reached = Locked(false)
        do {
            return try await exclusive { access in
                var state = try await access.read()
                let result = try transform(&state)
                reached.withLock { $0 = true }
                defer { self.bumpGeneration() }
                do {
                    try await access.write(state)
                } catch {
                    self.cache.withLock { if $0.unsaved != nil { $0.unsavedConnection = origin } }
                    throw error
                }
                return result
            }
        } catch let error as StorageError where !reached.withLock({ $0 }) {
            // The lock or the read failed, after the server issued the connection: it is kept all the same, built on
            // the last document known, and written once the storage can be locked and read again.
            guard case .success(var state) = known else { throw error }
            let base = state
            _ = try transform(&state)
            keep(state, over: base, because: error, origin: origin)
            bumpGeneration()
            throw error
        }
    }

    /// Makes `state` the document this process uses while the storage cannot take it (see `save`).
    private func keep(_ state: StoredState, over stored: StoredState, because failure: StorageError, origin: String?) {
        let (first, startRetrying) = cache.withLock { c -> (Bool, Bool) in
            let first = c.unsaved == nil
            c.unsaved = Unsaved(state: state, base: c.unsaved?.base ?? stored, error: failure)
            c.state = state
            if origin != nil { c.unsavedConnection = origin }
            let start = !c.retrying
            c.retrying = true
            return (first, start)
        }
        if first { onUnsavedChange?(failure) }
        changes.notify()
        if startRetrying { retryUnsaved() }
    }

    /// Whether the connection waiting in memory for a write came from `origin` (see `replaceConnection(from:_:)`).
    func unsavedConnection(from origin: String) -> Bool {
        cache.withLock { $0.unsaved != nil && $0.unsavedConnection == origin }
    }

    /// Runs `body` holding the storage lock for the whole body, including the network call a refresh makes in it.
    /// This is how only one process spends a single-use refresh token.
    ///
    /// No thread waits or is held for it: a `LockingTokenStorage` is locked by `withAsyncLock`, which memory, file
    /// and PostgreSQL storages implement by suspending the task; a storage without a lock of its own by this
    /// process's lock per key, the same way. A storage with nothing but a synchronous `withLock` gets the default
    /// `withAsyncLock`, which has it run on a thread of the process's small shared pool (`BlockingPool`); that thread
    /// then also does the body's reads and writes (`LockBridge.current`).
    func exclusive<T: Sendable>(_ body: @Sendable (LockedState) async throws -> T) async throws -> T {
        if let locking = storage as? any LockingTokenStorage {
            let key = key
            return try await locking.withAsyncLock(key) {
                let bridge = LockBridge.current.flatMap { $0.serves(key) ? $0 : nil }
                return try await body(LockedState(store: self, bridge: bridge))
            }
        }
        return try await unheldFallbackLock().withAsyncLock { try await body(LockedState(store: self, bridge: nil)) }
    }

    /// This key's lock for a storage without one of its own, checked not to be the caller's already.
    private func unheldFallbackLock() throws -> OwnedLock {
        let lock = Self.fallbackLocks.lock(for: key)
        if lock.isHeldByCaller {
            throw StorageError(
                kind: .reentrantLock, path: location,
                reason: "the state was changed from inside its own update; this is a bug in ProfirestAPI")
        }
        return lock
    }

    /// The storage's document as read; a read failure is remembered while nothing is known.
    fileprivate func loadFromStorage() throws -> StoredState {
        do {
            guard let text = try storage.get(key) else { return StoredState() }
            if let known = cache.withLock({ c in c.parsed.flatMap { $0.text == text ? $0.state : nil } }) {
                return known
            }
            let state = try StoredState.decode(text, location: location)
            cache.withLock { c in
                c.parsed = Parsed(text: text, state: state, isCanonical: false)
                c.parses += 1
            }
            return state
        } catch let error as StorageError {
            cache.withLock { $0.readFailure = error }
            throw error
        }
    }

    /// What this process uses, given what the storage holds: its own unsaved document while the storage still
    /// holds what that document was written over; otherwise the storage's (another process changed it since, and
    /// its change wins: the unsaved one is dropped and the drop reported).
    fileprivate func reconcile(_ stored: StoredState) throws -> StoredState {
        let (state, dropped) = cache.withLock { c -> (StoredState, Bool) in
            c.readFailure = nil
            if let unsaved = c.unsaved {
                if unsaved.base == stored { return (unsaved.state, false) }
                c.unsaved = nil
                c.unsavedConnection = nil
                c.state = stored
                return (stored, true)
            }
            c.state = stored
            return (stored, false)
        }
        if dropped { onUnsavedChange?(nil) }
        changes.notify()
        return state
    }

    /// Writes `state` over `stored` (what this lock's read found). On failure `state` stays the one this process
    /// uses — the server may have issued it, and it cannot be asked for again — and is written again by every
    /// later change and by a task at growing intervals (at most `maxRetryInterval`) until a write succeeds.
    fileprivate func save(_ state: StoredState, over stored: StoredState) throws {
        var empty = StoredState()
        empty.version = state.version
        var written: String?
        // A change of cursors alone, over the canonical text last read or written: that text with the cursors
        // replaced is the new document's canonical text, and known without a parse.
        let spliced = Self.cursorsReplaced(in: cache.withLock { $0.parsed }, state, over: stored)
        do {
            // Nothing left worth keeping: remove the key rather than leave an empty shell behind.
            if state == empty {
                try storage.remove(key)
            } else {
                let text = try spliced ?? state.encoded()
                try storage.set(key, text)
                written = text
            }
        } catch {
            let failure = error as? StorageError
                ?? StorageError(kind: .unwritable, path: location, reason: "the state could not be written: \(error)")
            keep(state, over: stored, because: failure, origin: nil)
            throw failure
        }
        // Worked out outside the lock (it may parse); any text with its exact document is right to keep.
        let parsed = spliced != nil
            ? written.map { Parsed(text: $0, state: state, isCanonical: true) }
            : written.flatMap { Self.parsed($0, state, over: stored, known: cache.withLock { $0.parsed }) }
        let wasUnsaved = cache.withLock { c -> Bool in
            let was = c.unsaved != nil
            c.unsaved = nil
            c.unsavedConnection = nil
            c.state = state
            if written != nil { c.parsed = parsed }
            if written != nil, spliced != nil { c.cursorReplacements += 1 }
            return was
        }
        if wasUnsaved { onUnsavedChange?(nil) }
        changes.notify()
    }

    /// What is known of the text `state` was just written as, over `stored` (what the lock's read found): a
    /// canonical document changed in its cursors alone needs no parse; any other is parsed once here, so that the
    /// cursor stores that follow it find a canonical one.
    private static func parsed(_ text: String, _ state: StoredState, over stored: StoredState, known: Parsed?) -> Parsed? {
        if let known, known.isCanonical, known.state == stored,
            state.eventsCursor.keys.allSatisfy(StoredState.isCursorKey)
        {
            var others = state
            others.eventsCursor = stored.eventsCursor
            if others == stored { return Parsed(text: text, state: state, isCanonical: true) }
        }
        guard let decoded = try? StoredState.decode(text, location: ""), decoded == state else { return nil }
        return Parsed(text: text, state: state, isCanonical: true)
    }

    /// The canonical text of `state` made from `known`'s by replacing cursors, when `known` is the canonical text
    /// of `stored` (what the lock's read found) and `state` differs from `stored` in the values of cursors it
    /// already holds and nothing else; nil otherwise (the document is then encoded whole).
    private static func cursorsReplaced(in known: Parsed?, _ state: StoredState, over stored: StoredState) -> String? {
        guard let known, known.isCanonical, state.eventsCursor.count == stored.eventsCursor.count,
            known.state == stored
        else { return nil }
        var changed: [String: String] = [:]
        for (key, cursor) in state.eventsCursor {
            guard let old = stored.eventsCursor[key], StoredState.isCursorKey(key) else { return nil }
            if old != cursor { changed[key] = cursor }
        }
        var others = state
        others.eventsCursor = stored.eventsCursor
        guard others == stored else { return nil }
        if changed.isEmpty { return known.text }
        return JSONWriter.replacingTopLevelStrings(in: known.text, changed)
    }

    /// Writes the unsaved state again after 1, 2, 4 … seconds (at most `maxRetryInterval`) until it is saved, or
    /// the store is gone.
    private func retryUnsaved() {
        let sleep = self.sleep
        Task { [weak self] in
            var wait: TimeInterval = 1
            while true {
                try? await sleep(wait)
                guard let self else { return }
                let done = self.cache.withLock { c -> Bool in
                    if c.unsaved == nil { c.retrying = false }
                    return !c.retrying
                }
                if done { return }
                try? await self.saveUnsaved()
                wait = min(wait * 2, Self.maxRetryInterval)
            }
        }
    }
}

/// Access to the document while `StateStore.exclusive` holds the lock. Use it only inside that body: its reads and
/// writes go through the lock (for a storage with only a synchronous lock, on the thread that holds it).
final class LockedState: Sendable {
    private let store: StateStore
    private let bridge: LockBridge?
    /// What the last `read` found in the storage, which a `write` replaces.
    private let stored = Locked<StoredState?>(nil)

    fileprivate init(store: StateStore, bridge: LockBridge?) {
        self.store = store
        self.bridge = bridge
    }

    /// The document this process should build on: the storage's as it is now (another process may have changed
    /// it), or this process's newer one that could not be written yet.
    func read() async throws -> StoredState {
        let store = self.store
        let found = try await perform { try store.loadFromStorage() }
        stored.withLock { $0 = found }
        return try store.reconcile(found)
    }

    /// Replaces the document. When the storage refuses, `state` is still what this process uses from now on (see
    /// `StateStore.save`) and the `StorageError` is thrown.
    func write(_ state: StoredState) async throws {
        let store = self.store
        let over = stored.withLock { $0 }
        guard let over else {
            // Every caller reads first; a write without a read builds on what the storage holds now.
            _ = try await read()
            return try await write(state)
        }
        try await perform { try store.save(state, over: over) }
        stored.withLock { $0 = state }
    }

    private func perform<R: Sendable>(_ operation: @escaping @Sendable () throws -> R) async throws -> R {
        guard let bridge else { return try operation() }
        return try await bridge.perform(operation)
    }
}

// A store shows its key and the redacted state, never a token.
extension StateStore: CustomReflectable {
    var customMirror: Mirror { Mirror(self, children: ["key": key, "state": snapshot]) }
}
