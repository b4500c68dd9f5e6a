import Foundation

/// A list that tasks append to and the test reads, behind a lock.
final class Recorder<Item: Sendable>: @unchecked Sendable {
    // @unchecked: `items` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: [Item] = []

    func add(_ new: [Item]) {
        lock.lock()
        stored += new
        lock.unlock()
    }

    var items: [Item] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

/// Waits, in real time but without virtual time passing, until `condition` holds; false after `limit` seconds.
func eventually(limit: TimeInterval = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(limit)
    while !condition() {
        if Date() >= deadline { return false }
        try? await Task.sleep(nanoseconds: 500_000)
    }
    return true
}
