import Foundation

/// Ends exchanges that outlive their deadline, with one shared timer instead of one per request.
///
/// A `DispatchWorkItem` per request cannot be unscheduled: a cancelled one stays in the queue's timer heap until
/// its (30 s) deadline, so thousands pile up under load. Here adding and removing a deadline is a dictionary
/// operation, and a single timer ticks every 50 ms only while something is in flight (deadlines are therefore
/// met to within about 50 ms).
final class DeadlineSweeper: @unchecked Sendable {
    // @unchecked: `entries`, `nextID` and `timer` are touched only while `lock` is held.
    private let lock = NSLock()
    private var entries: [Int: (deadline: UInt64, fire: @Sendable () -> Void)] = [:]
    private var nextID = 0
    private var timer: DispatchSourceTimer?
    private let queue = DispatchQueue(label: "ProfirestAPI.DeadlineSweeper")

    static let shared = DeadlineSweeper()
    static let tick: DispatchTimeInterval = .milliseconds(50)

    /// Calls `fire` once `seconds` have passed, unless `remove` came first. Returns the id for `remove`.
    func add(after seconds: TimeInterval, _ fire: @escaping @Sendable () -> Void) -> Int {
        let nanoseconds = seconds >= 1e9 ? UInt64(1e18) : UInt64(max(0, seconds) * 1e9)
        let deadline = DispatchTime.now().uptimeNanoseconds + nanoseconds
        lock.lock()
        defer { lock.unlock() }
        nextID += 1
        entries[nextID] = (deadline, fire)
        if timer == nil {
            let source = DispatchSource.makeTimerSource(queue: queue)
            source.schedule(deadline: .now() + Self.tick, repeating: Self.tick, leeway: .milliseconds(10))
            source.setEventHandler { [weak self] in self?.sweep() }
            source.resume()
            timer = source
        }
        return nextID
    }

    func remove(_ id: Int) {
        lock.lock()
        entries[id] = nil
        lock.unlock()
    }

    private func sweep() {
        let now = DispatchTime.now().uptimeNanoseconds
        var due: [@Sendable () -> Void] = []
        lock.lock()
        for (id, entry) in entries where entry.deadline <= now {
            due.append(entry.fire)
            entries[id] = nil
        }
        if entries.isEmpty {
            // Nothing in flight: stop ticking until the next add.
            timer?.cancel()
            timer = nil
        }
        lock.unlock()
        for fire in due { fire() }
    }
}
