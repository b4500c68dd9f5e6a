import Foundation

/// The one place that reads and writes a connection's `StoredState`.
///
/// Every write re-reads the document inside the storage lock (`AsyncLockingTokenStorage.withAsyncLock`, or
/// `LockingTokenStorage.withLock`), so a change made by another process in the meantime is never overwritten by a
/// stale copy. Storages without a lock of their own are serialized within this process by a lock per storage key.
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

    private struct Cache {
        var state: StoredState?
        var generation: UInt64 = 0
    }

    /// Serializes writers of storages that have no lock of their own, per key, within this process.
    private static let fallbackLocks = OwnedLockTable()

    init(storage: any TokenStorage, key: String) {
        self.storage = storage
        self.key = key
    }

    /// The default storage key of a client: `profirest-api:<client_id>`.
    static func defaultKey(clientID: String) -> String { "profirest-api:" + clientID }

    /// Where errors say the problem is; the key names the connection, never its content.
    var location: String { "storage key \(key)" }

    // MARK: Synchronous readers

    /// The last known document, loaded on first use. An unreadable document reads as empty here (these
    /// readers cannot throw), while `read()` and every write keep throwing its `StorageError`.
    var snapshot: StoredState {
        if let state = cache.withLock({ $0.state }) { return state }
        return (try? read()) ?? StoredState()
    }

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
        try await updateAsync { $0.eventsCursor[key] = cursor }
    }

    // MARK: Storage access

    /// Reads the document afresh from the storage, for the paths that must see another process's change (the
    /// snapshot may be older).
    func read() throws -> StoredState {
        let state = try loadFromStorage()
        remember(state)
        return state
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
        var state = try loadFromStorage()
        remember(state)
        let before = state
        let result = try transform(&state)
        if state != before { try saveToStorage(state) }
        return result
    }

    /// Like `update`, from async code: waits for the lock without blocking a thread (see `exclusive`).
    @discardableResult
    func updateAsync<T: Sendable>(_ transform: @escaping @Sendable (inout StoredState) throws -> T) async throws -> T {
        try await exclusive { access in
            var state = try await access.read()
            let before = state
            let result = try transform(&state)
            if state != before { try await access.write(state) }
            return result
        }
    }

    /// Stores a new connection (a finished pairing or consent) and bumps the generation, both inside the lock:
    /// whoever sees the new generation also finds the new tokens, and a refresh of the old connection that held
    /// the lock before us is overwritten rather than overwriting us.
    @discardableResult
    func replaceConnection<T: Sendable>(_ transform: @escaping @Sendable (inout StoredState) throws -> T) async throws -> T {
        try await exclusive { access in
            var state = try await access.read()
            let result = try transform(&state)
            try await access.write(state)
            self.bumpGeneration()
            return result
        }
    }

    /// Runs `body` holding the storage lock for the whole body, including the network call a refresh makes in it.
    /// This is how only one process spends a single-use refresh token.
    ///
    /// No thread waits or is held for it: an `AsyncLockingTokenStorage` (memory, file, PostgreSQL) is locked by
    /// suspending the task; a storage without a lock of its own by this process's lock per key, the same way; only a
    /// storage with nothing but a synchronous `withLock` has it run on a thread of the process's small shared pool
    /// (`BlockingPool`), which then also does the body's reads and writes (`LockBridge`).
    func exclusive<T: Sendable>(_ body: @Sendable (LockedState) async throws -> T) async throws -> T {
        switch storage {
        case let locking as any AsyncLockingTokenStorage:
            return try await locking.withAsyncLock(key) { try await body(LockedState(store: self, bridge: nil)) }
        case let locking as any LockingTokenStorage:
            return try await LockBridge.run(locking, key: key) { bridge in
                try await body(LockedState(store: self, bridge: bridge))
            }
        default:
            return try await unheldFallbackLock().withAsyncLock { try await body(LockedState(store: self, bridge: nil)) }
        }
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

    fileprivate func loadFromStorage() throws -> StoredState {
        guard let text = try storage.get(key) else { return StoredState() }
        return try StoredState.decode(text, location: location)
    }

    fileprivate func saveToStorage(_ state: StoredState) throws {
        var empty = StoredState()
        empty.version = state.version
        // Nothing left worth keeping: remove the key rather than leave an empty shell behind.
        if state == empty {
            try storage.remove(key)
        } else {
            try storage.set(key, try state.encoded())
        }
        remember(state)
    }

    fileprivate func remember(_ state: StoredState) {
        cache.withLock { $0.state = state }
    }
}

/// Access to the document while `StateStore.exclusive` holds the lock. Use it only inside that body: its reads and
/// writes go through the lock (for a storage with only a synchronous lock, on the thread that holds it).
final class LockedState: Sendable {
    private let store: StateStore
    private let bridge: LockBridge?

    fileprivate init(store: StateStore, bridge: LockBridge?) {
        self.store = store
        self.bridge = bridge
    }

    /// The document as it is in the storage now (another process may have changed it).
    func read() async throws -> StoredState {
        let store = self.store
        let state = try await perform { try store.loadFromStorage() }
        store.remember(state)
        return state
    }

    /// Replaces the document.
    func write(_ state: StoredState) async throws {
        let store = self.store
        try await perform { try store.saveToStorage(state) }
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
