import Foundation

/// A few threads, shared by the whole process, for the calls that may block for long — taking a file lock that
/// another process holds, a storage's synchronous `withLock` — so that they never park a thread of the cooperative
/// pool (which has one per core: two blocked ones would stall every task of the process).
///
/// Bounded: at most `maximumThreads` run at once, more work waits in order; threads are started on demand and end
/// after `idleSeconds` without work, so a process that never needs one has none.
package final class BlockingPool: @unchecked Sendable {
    // @unchecked: `jobs`, `threads` and `idle` are only touched while `condition` is locked.
    /// The process's pool: 4 threads at most.
    package static let shared = BlockingPool(maximumThreads: 4)

    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var threads = 0
    private var idle = 0
    private let maximumThreads: Int
    private let idleSeconds: TimeInterval

    package init(maximumThreads: Int, idleSeconds: TimeInterval = 10) {
        self.maximumThreads = max(1, maximumThreads)
        self.idleSeconds = idleSeconds
    }

    /// Runs `work` on a thread of the pool and waits for it without blocking the caller's thread. Not cancellable:
    /// the work runs to its end, since what it took (a lock) must be handed back.
    package func run<T>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        let outcome: Outcome<T> = await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: Outcome(Result { try work() })) }
        }
        return try outcome.result.get()
    }

    /// Queues `job` for the next free thread, starting one when none is free and the pool is not full.
    package func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        // A new thread when the idle ones are already spoken for by the jobs queued before this one: a job held for
        // long (a lock over a refresh) must not make the next one wait behind it while the pool has room.
        let start = jobs.count > idle && threads < maximumThreads
        if start { threads += 1 }
        condition.signal()
        condition.unlock()
        if start {
            let thread = Thread { [self] in
                ThreadName.nameCurrentThread("ProfirestBlock")
                work()
            }
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
            let woken = condition.wait(until: Date(timeIntervalSinceNow: idleSeconds))
            idle -= 1
            if !woken && jobs.isEmpty { break }
        }
        threads -= 1
        condition.unlock()
    }
}

/// A result carried across threads: what the pool's work returns need not be `Sendable` (a file lock's handle), since
/// it is handed over once and never shared.
private struct Outcome<T>: @unchecked Sendable {
    let result: Result<T, Error>
    init(_ result: Result<T, Error>) { self.result = result }
}
