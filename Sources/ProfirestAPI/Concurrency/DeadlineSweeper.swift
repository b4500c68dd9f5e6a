import Foundation

/// Meets every real-time deadline of the library — its sleeps and its exchanges' time limits — with one shared
/// timer, so that a wait that ends early takes its deadline with it at once.
///
/// A cancelled `Task.sleep` (on Linux) or `DispatchWorkItem` cannot be unscheduled: it keeps its memory (about 1.5 KB)
/// in the dispatch timer heap until its deadline would have passed, so a feed that opens and drops connections, or a
/// client under load, piles them up by the thousand for tens of seconds. Here adding and removing a deadline are table
/// operations, and the one dispatch timer is set to the earliest deadline still waited for: it wakes only when
/// something is due, meets it to within about a millisecond, and does not wake at all while nothing waits.
final class DeadlineSweeper: @unchecked Sendable {
    // @unchecked: `waiting`, `heap`, `nextID` and `armed` are touched, and `timer` rescheduled, only while `lock` is
    // held.

    /// What a deadline ends: a call to make, or a sleeping task to resume.
    private enum Waiter {
        case call(@Sendable () -> Void)
        case sleeper(UnsafeContinuation<Void, Error>)
    }

    private let lock = NSLock()
    private var waiting: [Int: Waiter] = [:]
    /// The deadlines (uptime, nanoseconds) as a binary min-heap. An id removed early stays in it until it reaches the
    /// top or the heap is rebuilt, which happens once such ids outnumber the waiting ones: removing costs no search,
    /// and what is left behind is bounded by what waits.
    private var heap: [(deadline: UInt64, id: Int)] = []
    private var nextID = 0
    /// The deadline the timer is set to; `UInt64.max` when it is set to nothing.
    private var armed = UInt64.max
    private let timer: DispatchSourceTimer

    static let shared = DeadlineSweeper()
    /// How late the system may fire the timer to fold wake-ups together: short waits (a few milliseconds between
    /// attempts) must stay short.
    static let leeway: DispatchTimeInterval = .milliseconds(1)

    init() {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "ProfirestAPI.DeadlineSweeper"))
        timer.schedule(deadline: .distantFuture, leeway: Self.leeway)
        timer.setEventHandler { [weak self] in self?.sweep() }
        timer.resume()
    }

    deinit { timer.cancel() }

    /// Calls `fire` once `seconds` have passed, unless `remove` came first. Returns the id for `remove`.
    func add(after seconds: TimeInterval, _ fire: @escaping @Sendable () -> Void) -> Int {
        let deadline = Self.deadline(after: seconds)
        lock.lock()
        defer { lock.unlock() }
        nextID += 1
        insert(nextID, deadline, .call(fire))
        return nextID
    }

    /// Forgets the deadline of `id`: its call is not made. Does nothing when it was made already.
    func remove(_ id: Int) {
        lock.lock()
        _ = take(id)
        lock.unlock()
    }

    /// Waits `seconds` of real time; throws `CancellationError` as soon as the task is cancelled, and the deadline
    /// leaves the table then, not when it would have passed. A wait of zero or less only yields; a wait beyond about
    /// 30 years lasts until the cancellation.
    func sleep(_ seconds: TimeInterval) async throws {
        guard seconds > 0 else {
            await Task.yield()
            try Task.checkCancellation()
            return
        }
        let (id, deadline) = (newID(), Self.deadline(after: seconds))
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, Error>) in
                lock.lock()
                // The task's cancelled flag is set before its handler runs, and the handler waits for the lock: a
                // cancellation that came before this point found nothing to resume, and is seen here instead.
                guard !Task.isCancelled else {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                    return
                }
                insert(id, deadline, .sleeper(continuation))
                lock.unlock()
            }
        } onCancel: {
            lock.lock()
            let waiter = take(id)
            lock.unlock()
            if case .sleeper(let continuation) = waiter { continuation.resume(throwing: CancellationError()) }
        }
    }

    /// How many deadlines are waited for now, and how many the heap holds (those removed early included).
    var load: (waiting: Int, held: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (waiting.count, heap.count)
    }

    private func newID() -> Int {
        lock.lock()
        defer { lock.unlock() }
        nextID += 1
        return nextID
    }

    /// The uptime `seconds` from now; `UInt64.max` (never) beyond about 30 years, or for a non-number.
    private static func deadline(after seconds: TimeInterval) -> UInt64 {
        let now = DispatchTime.now().uptimeNanoseconds
        guard seconds > 0 else { return seconds.isNaN ? .max : now }
        guard seconds < 1e9 else { return .max }
        return now + UInt64(seconds * 1e9)
    }

    // MARK: Under `lock`

    private func insert(_ id: Int, _ deadline: UInt64, _ waiter: Waiter) {
        waiting[id] = waiter
        // A deadline of never is kept in the table (for `remove` and the cancellation) but not in the heap.
        guard deadline < .max else { return }
        heap.append((deadline, id))
        siftUp(heap.count - 1)
        if deadline < armed { arm(deadline) }
    }

    /// The waiter of `id`, out of the table; nil when its deadline has fired or it was removed already.
    private func take(_ id: Int) -> Waiter? {
        guard let waiter = waiting.removeValue(forKey: id) else { return nil }
        if waiting.isEmpty {
            rest()
        } else if heap.count > 64 && heap.count > 2 * waiting.count {
            heap.removeAll { waiting[$0.id] == nil }
            for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
        }
        return waiter
    }

    /// Nothing waits: the timer is set to nothing, and the memory of a burst of waits is given back.
    private func rest() {
        waiting = [:]
        heap = []
        if armed != .max {
            armed = .max
            timer.schedule(deadline: .distantFuture, leeway: Self.leeway)
        }
    }

    /// Sets the timer to `deadline`, replacing what it was set to.
    private func arm(_ deadline: UInt64) {
        armed = deadline
        timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline), leeway: Self.leeway)
    }

    private func popMin() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        if !heap.isEmpty { siftDown(0) }
    }

    private func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            let right = left + 1
            let least = right < heap.count && heap[right].deadline < heap[left].deadline ? right : left
            guard heap[least].deadline < heap[parent].deadline else { return }
            heap.swapAt(least, parent)
            parent = least
        }
    }

    // MARK: The timer's queue

    /// Ends what is due, then sets the timer to the next deadline still waited for, or to nothing.
    private func sweep() {
        var due: [Waiter] = []
        lock.lock()
        armed = .max
        let now = DispatchTime.now().uptimeNanoseconds
        while let top = heap.first {
            guard let waiter = waiting[top.id] else {
                // Removed before its deadline.
                popMin()
                continue
            }
            if top.deadline > now { break }
            popMin()
            waiting[top.id] = nil
            due.append(waiter)
        }
        // The loop left a waited-for deadline on top, if any.
        if waiting.isEmpty { rest() } else if let next = heap.first { arm(next.deadline) }
        lock.unlock()
        for waiter in due {
            switch waiter {
            case .call(let fire): fire()
            case .sleeper(let continuation): continuation.resume()
            }
        }
    }
}
