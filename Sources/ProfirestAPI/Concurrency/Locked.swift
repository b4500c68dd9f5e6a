import Foundation

/// A value guarded by a lock, for the few pieces of shared mutable state (per-task callbacks, page cursors); the
/// package's test kit and test support share it.
///
/// NSLock rather than `Synchronization.Mutex`: `Mutex` needs macOS 15 / iOS 18 (tvOS 18, watchOS 11), newer than the
/// package's deployment floor (macOS 12, iOS 15, tvOS 15, watchOS 8; Package.swift).
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is read and written only inside `withLock`.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
