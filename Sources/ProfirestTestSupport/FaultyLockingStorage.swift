import Foundation
import ProfirestAPI

/// ``FaultyStorage`` for a storage with a cross-process lock (file, memory): its locks are counted and failed too.
///
/// ```swift
/// let storage = FaultyLockingStorage(FileTokenStorage(path: path), plan: .nth(.lock, 2))
/// ```
public final class FaultyLockingStorage: FaultyStorage, LockingTokenStorage, @unchecked Sendable {
    private let locking: any LockingTokenStorage

    /// Wraps `inner`; see ``FaultyStorage/init(_:plan:injection:)``.
    public init(_ inner: any LockingTokenStorage, plan: Plan, injection: Injection? = nil) {
        locking = inner
        super.init(inner, plan: plan, injection: injection)
    }

    public func withLock<T>(_ key: String, _ body: () throws -> T) throws -> T {
        try enter(.lock)
        return try locking.withLock(key, body)
    }

    public func withAsyncLock<T: Sendable>(_ key: String, _ body: @Sendable () async throws -> T) async throws -> T {
        try enter(.lock)
        return try await locking.withAsyncLock(key, body)
    }
}
