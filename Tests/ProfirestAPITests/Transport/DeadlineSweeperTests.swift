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
    }
}
