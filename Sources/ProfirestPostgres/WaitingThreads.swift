import Foundation

/// A few threads, shared by this module's storages, for the one wait that may be long: `pg_advisory_lock` while
/// another process holds the lock (its refresh may take a network round trip or more). Waiting there on a thread of
/// the cooperative pool — one per core — could stall every task of the process; here at most `maximumThreads` wait at
/// once, more waits queue in order, and threads end after a while without work. (ProfirestAPI has its own such pool
/// for file locks, which this module cannot see.)
final class WaitingThreads: @unchecked Sendable {
    // @unchecked: `jobs`, `threads` and `idle` are only touched while `condition` is locked.
    static let shared = WaitingThreads(maximumThreads: 4)

    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var threads = 0
    private var idle = 0
    private let maximumThreads: Int

    init(maximumThreads: Int) { self.maximumThreads = max(1, maximumThreads) }

    /// Runs `work` on a thread of the pool and waits for it suspended; not cancellable (what it takes must be handed
    /// back).
    func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: work()) }
        }
    }

    private func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        let start = idle == 0 && threads < maximumThreads
        if start { threads += 1 }
        condition.signal()
        condition.unlock()
        if start {
            let thread = Thread { [self] in work() }
            thread.name = "ProfirestPostgres.WaitingThreads"
            thread.start()
        }
    }

    private func work() {
        condition.lock()
        while true {
            if !jobs.isEmpty {
                let job = jobs.removeFirst()
                condition.unlock()
                job()
                condition.lock()
                continue
            }
            idle += 1
            let woken = condition.wait(until: Date(timeIntervalSinceNow: 10))
            idle -= 1
            if !woken && jobs.isEmpty { break }
        }
        threads -= 1
        condition.unlock()
    }
}
