import Foundation
import XCTest
@testable import ProfirestAPI

/// Requests cancelled as they complete, `workers` at a time, for a transport's cancellation tests: each worker sends,
/// spins for a random moment (never a sleep), cancels, and counts whether an answer or the cancellation came first.
///
/// Synchronous on purpose: if the transport deadlocked, the threads of the cooperative pool (two on a two-core
/// machine) would be stuck with it, and an async test could not even notice. The calling thread watches instead, and
/// a stall (no request ended for `stallLimit` seconds) ends the test process with a message rather than hanging it.
struct CancellationRace {
    var workers = 64
    /// Rounds per worker, at least; with `seconds`, workers go on until that much time has passed too.
    var rounds: Int
    var seconds: TimeInterval = 0
    /// The longest spin before the cancellation, in nanoseconds (one round in eight cancels at once, one only after
    /// its answer).
    var maxSpin: UInt64
    var stallLimit = 20

    struct Outcome {
        var answered = 0
        var cancelled = 0
        /// The status of one request sent after the race: the transport still works.
        var afterwards = 0
    }

    func run(_ transport: any HTTPTransport, _ request: HTTPRequest) -> Outcome {
        let outcomes = Locked(Outcome())
        let done = DispatchSemaphore(value: 0)
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        let (workers, rounds, maxSpin) = (self.workers, self.rounds, self.maxSpin)
        Task {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<workers {
                    group.addTask {
                        var random = SystemRandomNumberGenerator()
                        var round = 0
                        while round < rounds || DispatchTime.now().uptimeNanoseconds < end {
                            round += 1
                            let call = Task { try await transport.send(request) }
                            // One round in eight cancels at once and one only after its answer, so that both sides of
                            // the race happen however fast or loaded the machine is; the rest at a random moment.
                            let phase = (worker + round) % 8
                            if phase == 4 { _ = try? await call.value }
                            let spin = phase == 0 || phase == 4 ? 0 : UInt64.random(in: 0...maxSpin, using: &random)
                            let until = DispatchTime.now().uptimeNanoseconds + spin
                            while DispatchTime.now().uptimeNanoseconds < until { await Task.yield() }
                            call.cancel()
                            let answered = (try? await call.value) != nil
                            outcomes.withLock { answered ? ($0.answered += 1) : ($0.cancelled += 1) }
                        }
                    }
                }
            }
            let status = (try? await transport.send(request))?.status ?? 0
            outcomes.withLock { $0.afterwards = status }
            done.signal()
        }
        var ended = 0
        var still = 0
        while done.wait(timeout: .now() + 1) == .timedOut {
            let now = outcomes.withLock { $0.answered + $0.cancelled }
            still = now == ended ? still + 1 : 0
            ended = now
            if still >= stallLimit {
                fatalError("the transport stalled: no request ended for \(stallLimit) s, after \(ended) raced requests")
            }
        }
        return outcomes.withLock { $0 }
    }
}
