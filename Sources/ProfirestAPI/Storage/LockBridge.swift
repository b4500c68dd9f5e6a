import Foundation

/// Holds a storage's synchronous lock (`LockingTokenStorage.withLock`, for a storage that has no async form) for an
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
    /// Resumed once `withLock` entered its body (nil error) or failed before it.
    private var entered: CheckedContinuation<Void, Error>?
    private var enteredOutcome: Result<Void, Error>?
    /// Resumed once `withLock` returned, with what it threw after the body (a lock lost meanwhile).
    private var released: CheckedContinuation<Void, Error>?
    private var releasedOutcome: Result<Void, Error>?

    private init() {}

    /// Runs `body` while a pool thread holds `storage.withLock(key)`; `body` reads and writes through the bridge.
    static func run<T: Sendable>(
        _ storage: any LockingTokenStorage, key: String, _ body: @Sendable (LockBridge) async throws -> T
    ) async throws -> T {
        let bridge = LockBridge()
        BlockingPool.shared.submit {
            let outcome = Result { try storage.withLock(key) { bridge.serve() } }
            bridge.finish(outcome)
        }
        try await bridge.waitEntered()
        let result: Result<T, Error>
        do { result = .success(try await body(bridge)) } catch { result = .failure(error) }
        bridge.close()
        // What withLock throws after the body (e.g. the lock was lost meanwhile) replaces the body's outcome.
        try await bridge.waitReleased()
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
        condition.lock()
        enteredOutcome = .success(())
        let waiting = entered
        entered = nil
        condition.unlock()
        waiting?.resume()
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
        condition.lock()
        var resumeEntered: CheckedContinuation<Void, Error>?
        if enteredOutcome == nil {
            enteredOutcome = outcome
            resumeEntered = entered
            entered = nil
        }
        releasedOutcome = outcome
        let resumeReleased = released
        released = nil
        condition.unlock()
        resumeEntered?.resume(with: outcome)
        resumeReleased?.resume(with: outcome)
    }

    // MARK: The task's side

    private func waitEntered() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            condition.lock()
            if let outcome = enteredOutcome {
                condition.unlock()
                continuation.resume(with: outcome)
            } else {
                entered = continuation
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

    private func waitReleased() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            condition.lock()
            if let outcome = releasedOutcome {
                condition.unlock()
                continuation.resume(with: outcome)
            } else {
                released = continuation
                condition.unlock()
            }
        }
    }
}
