import Foundation

/// Holds a storage's synchronous lock (`LockingTokenStorage.withLock`, for a storage that has no async form of its own) for an
/// async body: the lock is taken on a thread of the process's `BlockingPool`, which then stays in `withLock` and does
/// the body's reads and writes there — the storage may know its lock's holder by thread — until the body ends.
///
/// One pool thread per such lock held, and at most the pool's size at once (more wait their turn): a custom storage
/// costs a bounded number of threads, never one per connection.
final class LockBridge: @unchecked Sendable {
    // @unchecked: every stored property is read or written only while `condition` is locked.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var closed = false
    /// Settled once `withLock` entered its body, or failed before it.
    private var entered = Milestone()
    /// Settled once `withLock` returned, with what it threw after the body (a lock lost meanwhile).
    private var released = Milestone()

    /// A moment on the pool thread's side that the task waits for: its outcome once reached, or the waiting task.
    private struct Milestone {
        var outcome: Result<Void, Error>?
        var waiter: CheckedContinuation<Void, Error>?
    }

    /// The bridge whose lock the current task's body holds, so that the library's own reads and writes in that body
    /// go to the thread holding the lock (the storage may know its lock's holder by thread).
    @TaskLocal static var current: LockBridge?

    /// The key whose lock this bridge holds.
    let key: String

    private init(key: String) {
        self.key = key
    }

    /// Whether reads and writes can still go through this bridge: its lock is held for `key`.
    func serves(_ key: String) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return !closed && self.key == key
    }

    /// Runs `body` while a pool thread holds `storage.withLock(key)`; `body` reads and writes through the bridge.
    static func run<T: Sendable>(
        _ storage: any LockingTokenStorage, key: String, _ body: @Sendable (LockBridge) async throws -> T
    ) async throws -> T {
        let bridge = LockBridge(key: key)
        BlockingPool.shared.submit {
            let outcome = Result { try storage.withLock(key) { bridge.serve() } }
            bridge.finish(outcome)
        }
        try await bridge.wait(for: \.entered)
        let result: Result<T, Error>
        do { result = .success(try await body(bridge)) } catch { result = .failure(error) }
        bridge.close()
        // What withLock throws after the body (e.g. the lock was lost meanwhile) replaces the body's outcome.
        try await bridge.wait(for: \.released)
        return try result.get()
    }

    /// Runs `operation` on the thread that holds the lock and returns its result.
    func perform<R: Sendable>(_ operation: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, Error>) in
            condition.lock()
            defer { condition.unlock() }
            guard !closed else {
                continuation.resume(throwing: StorageError(
                    kind: .lockFailed, path: "storage lock",
                    reason: "the state was read or written after its lock was released; this is a bug in ProfirestAPI"))
                return
            }
            jobs.append { continuation.resume(with: Result { try operation() }) }
            condition.signal()
        }
    }

    // MARK: The pool thread's side

    /// Inside `withLock`: says the lock is held, then runs the body's reads and writes until the body ends.
    private func serve() {
        reach(\.entered, .success(()))
        condition.lock()
        while true {
            if !jobs.isEmpty {
                let job = jobs.removeFirst()
                condition.unlock()
                job()
                condition.lock()
            } else if closed {
                break
            } else {
                condition.wait()
            }
        }
        condition.unlock()
    }

    /// After `withLock` returned or threw (before its body, when the lock could not be taken).
    private func finish(_ outcome: Result<Void, Error>) {
        reach(\.entered, outcome)  // no effect when the body was entered
        reach(\.released, outcome)
    }

    /// Settles `milestone` (only the first time) and resumes the task waiting for it.
    private func reach(_ milestone: ReferenceWritableKeyPath<LockBridge, Milestone>, _ outcome: Result<Void, Error>) {
        condition.lock()
        guard self[keyPath: milestone].outcome == nil else {
            condition.unlock()
            return
        }
        self[keyPath: milestone].outcome = outcome
        let waiter = self[keyPath: milestone].waiter
        self[keyPath: milestone].waiter = nil
        condition.unlock()
        waiter?.resume(with: outcome)
    }

    // MARK: The task's side

    /// Waits until `milestone` is reached, and throws what it failed with.
    private func wait(for milestone: ReferenceWritableKeyPath<LockBridge, Milestone>) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            condition.lock()
            if let outcome = self[keyPath: milestone].outcome {
                condition.unlock()
                continuation.resume(with: outcome)
            } else {
                self[keyPath: milestone].waiter = continuation
                condition.unlock()
            }
        }
    }

    private func close() {
        condition.lock()
        closed = true
        condition.signal()
        condition.unlock()
    }
}
