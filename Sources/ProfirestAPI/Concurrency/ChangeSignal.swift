import Foundation

/// Tells whoever listens that some of a client's state may have changed (its pairing, staff session, an outbox, a
/// feed), without saying what: a listener reads the state again and compares. A signal too many costs a comparison;
/// so the places that change state call `notify()` freely, and only a missed call could hide a change.
///
/// ```swift
/// let token = signal.listen { recompute() }; signal.notify(); signal.stopListening(token)
/// ```
final class ChangeSignal: Sendable {
    private struct State {
        var next = 0
        var listeners: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Locked(State())

    init() {}

    /// Calls `listener` after each `notify()` until `stopListening` with the returned token.
    func listen(_ listener: @escaping @Sendable () -> Void) -> Int {
        state.withLock { state in
            state.next += 1
            state.listeners[state.next] = listener
            return state.next
        }
    }

    func stopListening(_ token: Int) {
        _ = state.withLock { $0.listeners.removeValue(forKey: token) }
    }

    /// Calls every listener, outside the lock (a listener reads state that takes locks of its own).
    func notify() {
        let listeners = state.withLock { Array($0.listeners.values) }
        for listener in listeners { listener() }
    }
}
