import Foundation
import XCTest
@_spi(TransportTuning) @testable import ProfirestAPI

/// Cancellation racing the completion of many requests must never stall the transport.
///
/// On Linux the whole-body sessions complete their tasks inline on the session's work queue
/// (`InlineDelegateQueue`). A cancellation handler that waited for that queue — `URLSessionTask.cancel()` does —
/// while the queue resumes the same task's continuation would deadlock both for good (seen with
/// `URLSession.data(for:)`, which cancels that way, within a second of such a race). The transport cancels from
/// another thread; this test races 64 requests at a time against their cancellation and fails if they stop ending.
///
/// The transport raced is the platform's default: `URLSessionTransport` on Apple platforms; `CurlTransport` on Linux,
/// where FoundationNetworking itself can crash the process in this race ("TaskRegistry.swift:118: Trying to access a
/// behaviour for a task that in not in the registry", seen twice under load), which no transport code can prevent.
/// (`CurlTransportTests` races `CurlTransport` longer, with later cancellations, and checks nothing is left behind.)
final class TransportCancellationRaceTests: XCTestCase {
    var server: LoopbackServer!

    /// The platform's default transport, with connections kept.
    private func defaultTransport() throws -> any HTTPTransport {
        #if canImport(FoundationNetworking)
        return try CurlTransport()
        #else
        return URLSessionTransport(policy: .keepAlive)
        #endif
    }

    override func setUpWithError() throws { server = try LoopbackServer() }
    override func tearDown() { server?.stop() }

    func testCancellingRequestsAsTheyCompleteNeverStallsTheTransport() throws {
        // About two seconds of racing, at least 20 requests per worker, cancelled within 0–400 µs (an answer takes
        // about 200–500 µs here). A guard, not a proof: a transport that cancels synchronously stalled within that in
        // about one run of four here (URLSession.data(for:) within a second).
        let race = CancellationRace(rounds: 20, seconds: 2, maxSpin: 400_000, stallLimit: 10)
        let outcome = race.run(try defaultTransport(), HTTPRequest(method: "GET", url: server.url("/v2/staff")))
        XCTAssertGreaterThanOrEqual(outcome.answered + outcome.cancelled, 64 * 20)
        // Both sides of the race were reached.
        XCTAssertGreaterThan(outcome.answered, 0)
        XCTAssertGreaterThan(outcome.cancelled, 0)
        XCTAssertEqual(outcome.afterwards, 200)
    }
}
