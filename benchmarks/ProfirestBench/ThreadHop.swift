// The hand-over CurlTransport makes per request, alone: a task posts a job to a thread waiting in epoll on an eventfd
// (the engine's waker, CProfirestCurl's poller.c) and waits on a continuation; the thread takes the job and resumes
// the continuation, which puts the task back on the cooperative pool. No HTTP, no libcurl: what those two wake-ups
// cost, so that `…_floor_vs_curl` can say how close to libcurl driven directly a design with an engine thread can get.
#if os(Linux)
import CProfirestCurl
import Foundation
#if canImport(Glibc)
import Glibc
#endif

final class ThreadHop: @unchecked Sendable {
    // @unchecked: `jobs` is touched only under `lock`; the descriptors are fixed after init.
    private let lock = NSLock()
    private var jobs: [CheckedContinuation<Int, Never>] = []
    private let poller: Int32
    private let waker: Int32

    init() throws {
        poller = pfc_poller_create()
        waker = pfc_waker_create()
        guard poller >= 0, waker >= 0, pfc_poller_watch(poller, waker, Int32(PFC_POLL_IN)) == 0 else {
            throw BenchFailure("epoll or eventfd could not be made")
        }
        let thread = Thread { [self] in run() }
        thread.name = "ProfirestBench.ThreadHop"
        thread.start()
    }

    /// One round trip: to the thread and back to the pool.
    func hop() async -> Int {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            lock.lock()
            jobs.append(continuation)
            lock.unlock()
            pfc_waker_signal(waker)
        }
    }

    private func run() {
        var fds = [Int32](repeating: 0, count: 4)
        var ready = [Int32](repeating: 0, count: 4)
        while true {
            _ = pfc_poller_wait(poller, -1, &fds, &ready, 4)
            pfc_waker_drain(waker)
            lock.lock()
            let taken = jobs
            jobs.removeAll(keepingCapacity: true)
            lock.unlock()
            for job in taken { job.resume(returning: 1) }
        }
    }
}
#endif
