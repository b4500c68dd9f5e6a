import Foundation

/// A value guarded by a lock, for the identity layer's shared state (the state snapshot, pairing progress,
/// the staff session).
///
/// The pipeline branch brings an identical `Locked<Value>`; this one has its own name so both branches merge
/// cleanly, and the wiring step may fold it into `Locked`. NSLock rather than `Synchronization.Mutex`, which needs
/// macOS 15 / iOS 18, newer than our deployment floor.
final class AuthLocked<Value>: @unchecked Sendable {
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
