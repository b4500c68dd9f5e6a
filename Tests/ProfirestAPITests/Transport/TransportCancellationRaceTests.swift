#if !canImport(FoundationNetworking)
import Foundation
import XCTest
@testable import ProfirestAPI

/// Cancellation racing the completion of many requests must never stall the transport.
///
/// On Linux the whole-body sessions complete their tasks inline on the session's work queue
/// (`InlineDelegateQueue`). A cancellation handler that waited for that queue — `URLSessionTask.cancel()` does —
/// while the queue resumes the same task's continuation would deadlock both for good (seen with
/// `URLSession.data(for:)`, which cancels that way, within a second of such a race). The transport cancels from
/// another thread; this test races 64 requests at a time against their cancellation and fails if they stop ending.
///
/// Apple platforms only: on Linux, FoundationNetworking itself can crash the process in this race
/// ("TaskRegistry.swift:118: Trying to access a behaviour for a task that in not in the registry", seen twice under
/// load), which no transport code can prevent, and a test that can crash the run has no place in `make test`. The
/// Linux default, `CurlTransport`, has its own race (`CurlTransportTests`, 10,048 requests).
final class TransportCancellationRaceTests: XCTestCase {
    var server: LoopbackServer!

    override func setUpWithError() throws { server = try LoopbackServer() }
    override func tearDown() { server?.stop() }

    /// Synchronous on purpose: if the transport deadlocked, the threads of the cooperative pool (two on a two-core
    /// machine) would be stuck with it, and an async test could not even notice. The main thread watches instead, and
    /// a stall (no request ended for 10 s) ends the test process with a message rather than leaving it hanging.
    func testCancellingRequestsAsTheyCompleteNeverStallsTheTransport() throws {
        let transport = URLSessionTransport(connectionReuse: .keepAlive)
        let request = HTTPRequest(method: "GET", url: server.url("/v2/staff"))
        let outcomes = Locked((answered: 0, cancelled: 0, afterwards: 0))
        let done = DispatchSemaphore(value: 0)
        // About two seconds of racing, at least 20 requests per worker. A guard, not a proof: a transport that cancels
        // synchronously stalled within that in about one run of four here (URLSession.data(for:) within a second).
        let end = DispatchTime.now().uptimeNanoseconds + 2_000_000_000
        Task {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<64 {
                    group.addTask {
                        var random = SystemRandomNumberGenerator()
                        var round = 0
                        while round < 20 || DispatchTime.now().uptimeNanoseconds < end {
                            round += 1
                            let call = Task { try await transport.send(request) }
                            // Cancel anywhere from before the request goes out to after its answer came: a spin of
                            // 0–400 µs (an answer takes about 200–500 µs here), never a sleep.
                            let spin = (worker + round) % 8 == 0 ? 0 : UInt64.random(in: 0...400_000, using: &random)
                            let until = DispatchTime.now().uptimeNanoseconds + spin
                            while DispatchTime.now().uptimeNanoseconds < until { await Task.yield() }
                            call.cancel()
                            let answered = (try? await call.value) != nil
                            outcomes.withLock { answered ? ($0.answered += 1) : ($0.cancelled += 1) }
                        }
                    }
                }
            }
            // And the transport still works afterwards.
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
            if still >= 10 { fatalError("the transport stalled: no request ended for 10 s, after \(ended) raced requests") }
        }
        let (answered, cancelled, afterwards) = outcomes.withLock { ($0.answered, $0.cancelled, $0.afterwards) }
        XCTAssertGreaterThanOrEqual(answered + cancelled, 64 * 20)
        // Both sides of the race were reached.
        XCTAssertGreaterThan(answered, 0)
        XCTAssertGreaterThan(cancelled, 0)
        XCTAssertEqual(afterwards, 200)
    }
}
#endif
