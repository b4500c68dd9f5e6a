import Foundation

/// The one place that reads and writes a connection's `StoredState`.
///
/// Every write re-reads the document inside the storage lock (`LockingTokenStorage.withLock`), so a change made
/// by another process in the meantime is never overwritten by a stale copy. Storages without a lock of their own
/// are serialized within this process by a lock per storage key.
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
    /// network — so async code uses `updateAsync`: blocking every thread of the cooperative pool here would leave
    /// none to finish that refresh. Only the synchronous `authorizationURL` uses this one.
    @discardableResult
    func update<T>(_ transform: (inout StoredState) throws -> T) throws -> T {
        try locked { try Self.change($0, transform) }
    }

    /// Like `update`, from async code: waits for the lock on a thread of its own instead of blocking one of the
    /// cooperative pool's few threads, which a refresh holding the lock over a network call could stall.
    @discardableResult
    func updateAsync<T: Sendable>(_ transform: @escaping @Sendable (inout StoredState) throws -> T) async throws -> T {
        try await exclusive { try Self.change($0, transform) }
    }

    /// One read-modify-write inside the lock; the document is written only when the transform changed it.
    private static func change<T>(_ access: LockedState, _ transform: (inout StoredState) throws -> T) throws -> T {
        var state = try access.read()
        let before = state
        let result = try transform(&state)
        if state != before { try access.write(state) }
        return result
    }

    /// Stores a new connection (a finished pairing or consent) and bumps the generation, both inside the lock:
    /// whoever sees the new generation also finds the new tokens, and a refresh of the old connection that held
    /// the lock before us is overwritten rather than overwriting us.
    @discardableResult
    func replaceConnection<T: Sendable>(_ transform: @escaping @Sendable (inout StoredState) throws -> T) async throws -> T {
        try await exclusive { access in
            var state = try access.read()
            let result = try transform(&state)
            try access.write(state)
            self.bumpGeneration()
            return result
        }
    }

    /// Runs `body` on a dedicated thread that holds the storage lock for the whole body, including any network
    /// call it makes through `LockedState.wait`. This is how only one process spends a single-use refresh token.
    func exclusive<T: Sendable>(_ body: @escaping @Sendable (LockedState) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            // A real thread, not the cooperative pool: the lock blocks, and it is owned per thread.
            let thread = Thread {
                continuation.resume(with: Result { try self.locked(body) })
            }
            thread.start()
        }
    }

    private func locked<T>(_ body: (LockedState) throws -> T) throws -> T {
        if let locking = storage as? any LockingTokenStorage {
            return try locking.withLock(key) { try body(LockedState(store: self)) }
        }
        let lock = Self.fallbackLocks.lock(for: key)
        if lock.isHeldByCurrentThread {
            throw StorageError(
                kind: .reentrantLock, path: location,
                reason: "the state was changed from inside its own update; this is a bug in ProfirestAPI")
        }
        lock.acquire()
        defer { lock.release() }
        return try body(LockedState(store: self))
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

/// Access to the document while `StateStore.exclusive` (or `update`) holds the lock. Use it only inside that body,
/// on the thread that runs it: the storage lock belongs to that thread.
final class LockedState {
    private let store: StateStore

    fileprivate init(store: StateStore) { self.store = store }

    /// The document as it is in the storage now (another process may have changed it).
    func read() throws -> StoredState {
        let state = try store.loadFromStorage()
        store.remember(state)
        return state
    }

    /// Replaces the document.
    func write(_ state: StoredState) throws {
        try store.saveToStorage(state)
    }

    /// Runs async work (a token request) and blocks this thread, which keeps the lock, until it finishes.
    /// The work runs on the cooperative pool; it must not touch the storage itself.
    func wait<R: Sendable>(_ operation: @escaping @Sendable () async throws -> R) throws -> R {
        let outcome = Locked<Result<R, Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<R, Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}

// A store shows its key and the redacted state, never a token.
extension StateStore: CustomReflectable {
    var customMirror: Mirror { Mirror(self, children: ["key": key, "state": snapshot]) }
}
