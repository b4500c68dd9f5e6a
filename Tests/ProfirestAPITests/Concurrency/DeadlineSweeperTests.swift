import Foundation
import XCTest
@testable import ProfirestAPI

final class DeadlineSweeperTests: XCTestCase {
    func testFiresDueDeadlinesAndNotRemovedOnes() {
        let sweeper = DeadlineSweeper()
        let fired = expectation(description: "due deadline fired")
        let removed = Locked(false)
        let id = sweeper.add(after: 0.01) { removed.withLock { $0 = true } }
        sweeper.remove(id)
        _ = sweeper.add(after: 0.02) { fired.fulfill() }
        wait(for: [fired], timeout: 30)
        XCTAssertFalse(removed.withLock { $0 })
        XCTAssertEqual(sweeper.load.waiting, 0)
    }

    /// A sleep ends no earlier than asked, and a short one is not held to a coarse tick: the timer is set to the
    /// earliest deadline, also when a later one was set first.
    func testSleepsEndAtTheirOwnDeadlineEvenBehindALaterOne() async throws {
        let sweeper = DeadlineSweeper()
        let long = Task { try await sweeper.sleep(3600) }
        _ = await waitUntil(30) { sweeper.load.waiting == 1 }
        let start = DispatchTime.now().uptimeNanoseconds
        try await sweeper.sleep(0.005)
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        XCTAssertGreaterThanOrEqual(elapsed, 0.005, "never early")
        // Generous: both cores may be busy; a missed deadline would wait an hour.
        XCTAssertLessThan(elapsed, 10)
        XCTAssertEqual(sweeper.load.waiting, 1, "the long sleep still waits")
        long.cancel()
        await XCTAssertThrowsCancellation(long)
        XCTAssertEqual(sweeper.load.waiting, 0)
    }

    /// A cancelled sleep throws at once and leaves the table then, not at its deadline.
    func testCancelledSleepLeavesAtOnce() async throws {
        let sweeper = DeadlineSweeper()
        let sleeping = Task { try await sweeper.sleep(3600) }
        let registered = await waitUntil(30) { sweeper.load.waiting == 1 }
        XCTAssertTrue(registered)
        sleeping.cancel()
        await XCTAssertThrowsCancellation(sleeping)
        XCTAssertEqual(sweeper.load.waiting, 0)
        XCTAssertEqual(sweeper.load.held, 0, "nothing waits: the heap is given back")
    }

    /// A task cancelled before it sleeps, or while it is about to, throws CancellationError and leaves nothing; none
    /// of thousands hangs (a cancellation that came between the id and the continuation's registration).
    func testCancellationAtAnyMomentEndsTheSleep() async throws {
        let sweeper = DeadlineSweeper()
        let before = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await sweeper.sleep(3600)
        }
        await XCTAssertThrowsCancellation(before)
        let sleepers = (0..<2000).map { index in
            Task {
                if index % 3 == 0 { await Task.yield() }
                try await sweeper.sleep(3600)
            }
        }
        for (index, sleeper) in sleepers.enumerated() {
            if index % 2 == 0 { await Task.yield() }
            sleeper.cancel()
        }
        for sleeper in sleepers { await XCTAssertThrowsCancellation(sleeper) }
        XCTAssertEqual(sweeper.load.waiting, 0)
        XCTAssertEqual(sweeper.load.held, 0)
    }

    /// Deadlines removed early do not pile up in the heap while others keep waiting: it is rebuilt once they outnumber
    /// the waiting ones.
    func testRemovedDeadlinesDoNotPileUpWhileOthersWait() {
        let sweeper = DeadlineSweeper()
        let kept = (0..<10).map { _ in sweeper.add(after: 3600) {} }
        for _ in 0..<10_000 {
            sweeper.remove(sweeper.add(after: 3600) {})
        }
        XCTAssertEqual(sweeper.load.waiting, 10)
        XCTAssertLessThanOrEqual(sweeper.load.held, 65)
        for id in kept { sweeper.remove(id) }
        XCTAssertEqual(sweeper.load.waiting, 0)
        XCTAssertEqual(sweeper.load.held, 0)
    }

    /// Calls come in deadline order, each once.
    func testCallsComeInDeadlineOrder() {
        let sweeper = DeadlineSweeper()
        let order = Locked([Int]())
        let done = expectation(description: "all fired")
        done.expectedFulfillmentCount = 4
        for (label, seconds) in [(3, 0.03), (1, 0.01), (4, 0.04), (2, 0.02)] {
            _ = sweeper.add(after: seconds) {
                order.withLock { $0.append(label) }
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 30)
        XCTAssertEqual(order.withLock { $0 }, [1, 2, 3, 4])
        XCTAssertEqual(sweeper.load.held, 0)
    }

    /// A wait of zero or less does not wait, but still ends in a cancelled task.
    func testZeroWaitOnlyYields() async throws {
        let sweeper = DeadlineSweeper()
        try await sweeper.sleep(0)
        try await sweeper.sleep(-5)
        XCTAssertEqual(sweeper.load.waiting, 0)
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await sweeper.sleep(0)
        }
        await XCTAssertThrowsCancellation(cancelled)
    }

    private func XCTAssertThrowsCancellation(
        _ task: Task<Void, Error>, file: StaticString = #filePath, line: UInt = #line
    ) async {
        do {
            try await task.value
            XCTFail("the sleep ended without its cancellation", file: file, line: line)
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)", file: file, line: line)
        }
    }
}
