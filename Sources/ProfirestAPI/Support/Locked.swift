import Foundation

/// A value guarded by a lock, for the few pieces of shared mutable state (per-task callbacks, page cursors).
///
/// NSLock rather than `Synchronization.Mutex`: `Mutex` needs macOS 15 / iOS 18, older than our deployment floor.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is read and written only inside `withLock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
