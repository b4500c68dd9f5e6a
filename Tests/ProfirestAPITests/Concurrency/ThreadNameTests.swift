import Foundation
import XCTest
@testable import ProfirestAPI

/// The library's threads carry their names where the system's tools look (/proc/<pid>/task/*/comm on Linux), every
/// time: Foundation's own setter, run inside a new thread, missed 5–7 of 300 threads (a race with `start()`).
final class ThreadNameTests: XCTestCase {
    func testEveryNewThreadCarriesItsNameForTheSystem() {
        let missed = Locked(0)
        let group = DispatchGroup()
        for _ in 0..<300 {
            group.enter()
            Thread {
                ThreadName.nameCurrentThread("ProfirestTest")
                if Self.systemName() != "ProfirestTest" { missed.withLock { $0 += 1 } }
                group.leave()
            }.start()
        }
        group.wait()
        XCTAssertEqual(missed.withLock { $0 }, 0)
    }

    /// The calling thread's name as the system has it (Linux), or as Foundation has it elsewhere.
    private static func systemName() -> String? {
        #if os(Linux)
        return (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
        #else
        return Thread.current.name
        #endif
    }
}
