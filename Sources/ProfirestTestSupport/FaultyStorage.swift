import Foundation
import ProfirestAPI

/// A token storage that fails chosen operations of the storage it wraps — the Nth read, write or remove, or each one
/// at a random rate — with the error a real disk or keychain gives, so that tests can fail every write point of a
/// client's life in turn and check that nothing the server issued is lost. Counts every operation by kind.
///
/// Locks are counted and failed by ``FaultyLockingStorage``, the same wrapper for a storage with a lock.
///
/// ```swift
/// let storage = FaultyStorage(MemoryTokenStorage(), plan: .nth(.write, 3))
/// ```
public class FaultyStorage: TokenStorage, @unchecked Sendable {
    /// The kinds of storage operation a plan fails.
    public enum Operation: String, Sendable, CaseIterable, Hashable {
        /// `get`.
        case read
        /// `set`.
        case write
        /// `remove`.
        case remove
        /// `withLock` and `withAsyncLock`.
        case lock
    }

    /// Which operations fail.
    public enum Plan: Sendable {
        /// None: the storage only counts.
        case none
        /// The Nth operation of that kind (from 1), once.
        case nth(Operation, Int)
        /// Each operation with this probability, drawn from a generator seeded with `seed` (the same seed, the same
        /// faults for the same sequence of operations).
        case random(probability: Double, seed: UInt64)
    }

    /// What a failed operation does: throw the error a real storage gives (the default, ``realisticError(_:path:)``),
    /// or arrange for the wrapped storage to fail on its own and return (a keychain told to refuse its next call), so
    /// that the error is the wrapped storage's own.
    public typealias Injection = @Sendable (Operation) throws -> Void

    /// The storage the operations go to.
    public let inner: any TokenStorage
    private let plan: Plan
    private let injection: Injection
    private let state = NSLock()
    private var counted: [Operation: Int] = [:]
    private var injectedCount = 0
    private var generator: UInt64
    private var paused = false
    private var failingKinds: Set<Operation> = []

    /// Wraps `inner`; `injection` fails an operation (by default with ``realisticError(_:path:)``).
    ///
    /// ```swift
    /// FaultyStorage(storage, plan: .random(probability: 0.01, seed: 7))
    /// ```
    public init(_ inner: any TokenStorage, plan: Plan, injection: Injection? = nil) {
        self.inner = inner
        self.plan = plan
        self.injection = injection ?? { throw FaultyStorage.realisticError($0, path: "faulty-storage") }
        if case .random(_, let seed) = plan { generator = seed | 1 } else { generator = 1 }
    }

    /// How many operations of each kind were made (failed ones included).
    public var counts: [Operation: Int] { state.withLock { counted } }

    /// How many operations were failed.
    public var injected: Int { state.withLock { injectedCount } }

    /// Stops or resumes failing and counting, for a test's own checks in between the steps of a scripted life (their
    /// operations are then neither failed nor numbered).
    public var isPaused: Bool {
        get { state.withLock { paused } }
        set { state.withLock { paused = newValue } }
    }

    /// Besides the plan, every operation of these kinds fails while they are in the set — a disk that is full for a
    /// while, a keychain locked until the device is unlocked.
    ///
    /// ```swift
    /// storage.failing = [.write]  // full disk
    /// ```
    public var failing: Set<Operation> {
        get { state.withLock { failingKinds } }
        set { state.withLock { failingKinds = newValue } }
    }

    /// The error a full disk (write: ENOSPC), a read-only file system (remove: EROFS), a failing disk (read: EIO) or an
    /// unavailable lock (ENOLCK) gives a file storage, in the library's terms.
    public static func realisticError(_ operation: Operation, path: String) -> StorageError {
        // The C library's texts for these errno values (glibc's and Darwin's agree), written out: the same on every
        // platform the tests run on.
        switch operation {
        case .read:
            return StorageError(kind: .unreadable, path: path, reason: "the file cannot be read: Input/output error (EIO)")
        case .write:
            return StorageError(
                kind: .unwritable, path: path, reason: "the file cannot be written: No space left on device (ENOSPC)")
        case .remove:
            return StorageError(
                kind: .unwritable, path: path, reason: "the file cannot be removed: Read-only file system (EROFS)")
        case .lock:
            return StorageError(kind: .lockFailed, path: path, reason: "the lock cannot be taken: No locks available (ENOLCK)")
        }
    }

    /// Counts one operation and fails it when the plan says so.
    func enter(_ operation: Operation) throws {
        let fail: Bool = state.withLock {
            guard !paused else { return false }
            counted[operation, default: 0] += 1
            let chosen: Bool
            switch plan {
            case _ where failingKinds.contains(operation): chosen = true
            case .none: chosen = false
            case .nth(let kind, let n): chosen = kind == operation && counted[operation] == n
            case .random(let probability, _):
                // xorshift64*: small, seedable, good enough to spread faults.
                generator ^= generator >> 12
                generator ^= generator << 25
                generator ^= generator >> 27
                let draw = Double((generator &* 2_685_821_657_736_338_717) >> 11) / Double(1 << 53)
                chosen = draw < probability
            }
            if chosen { injectedCount += 1 }
            return chosen
        }
        if fail { try injection(operation) }
    }

    public func get(_ key: String) throws -> String? {
        try enter(.read)
        return try inner.get(key)
    }

    public func set(_ key: String, _ value: String) throws {
        try enter(.write)
        try inner.set(key, value)
    }

    public func remove(_ key: String) throws {
        try enter(.remove)
        try inner.remove(key)
    }
}
