import Foundation
import XCTest
@testable import ProfirestAPI

/// The few shared threads for blocking calls: bounded, and a long job never makes the next one wait while there is
/// room. The waits are for conditions with generous limits (they end at once when the pool behaves), never timings.
final class BlockingPoolTests: XCTestCase {
    func testNoMoreJobsRunAtOnceThanThePoolHasThreads() async throws {
        let pool = BlockingPool(maximumThreads: 2)
        let gauge = Gauge()
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<8 {
                group.addTask {
                    try await pool.run {
                        gauge.enter()
                        defer { gauge.leave() }
                        usleep(2_000)
                        return index
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(results.sorted(), Array(0..<8))
        XCTAssertLessThanOrEqual(gauge.most, 2)
    }

    func testAJobGetsAThreadOfItsOwnWhileTheIdleOneIsTakenByAnEarlierJob() async throws {
        let pool = BlockingPool(maximumThreads: 4)
        // One thread, now idle.
        _ = try await pool.run { 0 }
        let secondRan = DispatchSemaphore(value: 0)
        let firstSawSecond = Locked(false)
        // Both queued before the idle thread wakes: the first holds its thread until the second has run.
        pool.submit { firstSawSecond.withLock { $0 = secondRan.wait(timeout: .now() + 60) == .success } }
        pool.submit { secondRan.signal() }
        let finished = try await pool.run { true }
        XCTAssertTrue(finished)
        let seen = await waitUntil(60) { firstSawSecond.withLock { $0 } }
        XCTAssertTrue(seen, "the second job waited behind the first although the pool had room")
    }

    func testWhatTheWorkThrowsReachesTheCaller() async {
        struct Refused: Error {}
        do {
            _ = try await BlockingPool(maximumThreads: 1).run { () throws -> Int in throw Refused() }
            XCTFail("no error")
        } catch {
            XCTAssertTrue(error is Refused)
        }
    }
}

/// How many jobs run at once, and the most seen.
private final class Gauge: @unchecked Sendable {
    // @unchecked: both counters are guarded by `lock`.
    private let lock = NSLock()
    private var now = 0
    private var highest = 0

    var most: Int { lock.lock(); defer { lock.unlock() }; return highest }

    func enter() { lock.lock(); now += 1; highest = max(highest, now); lock.unlock() }
    func leave() { lock.lock(); now -= 1; lock.unlock() }
}
