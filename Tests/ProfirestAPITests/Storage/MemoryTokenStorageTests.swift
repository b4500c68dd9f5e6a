import XCTest
@testable import ProfirestAPI

final class MemoryTokenStorageTests: XCTestCase {
    func testGetSetRemove() throws {
        let storage = MemoryTokenStorage()
        XCTAssertNil(try storage.get("refresh"))
        try storage.set("refresh", "r1")
        try storage.set("access", "a1")
        try storage.set("refresh", "r2")
        XCTAssertEqual(try storage.get("refresh"), "r2")
        XCTAssertEqual(try storage.get("access"), "a1")
        try storage.remove("refresh")
        try storage.remove("never-set")
        XCTAssertNil(try storage.get("refresh"))
        XCTAssertEqual(try storage.get("access"), "a1")
        XCTAssertNil(try MemoryTokenStorage().get("access"), "instances do not share values")
    }

    func testWithLockExcludesOtherThreads() throws {
        let storage = MemoryTokenStorage()
        try storage.set("counter", "0")
        let run = incrementUnderLock(threads: 8, rounds: 500) { _ in storage }
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.errors, [])
        XCTAssertEqual(try storage.get("counter"), "4000")
    }

    func testNestedLockOnTheSameKeyThrowsAndOtherKeysWork() throws {
        let storage = MemoryTokenStorage()
        let result = try storage.withLock("a") {
            XCTAssertThrowsError(try storage.withLock("a") { 1 }) { error in
                XCTAssertEqual((error as? StorageError)?.kind, .reentrantLock)
            }
            return try storage.withLock("b") { 2 }
        }
        XCTAssertEqual(result, 2)
        XCTAssertEqual(try storage.withLock("a") { 3 }, 3, "the lock was released after the nested failure")
    }

    func testBodyErrorsPropagateAndReleaseTheLock() throws {
        struct Boom: Error {}
        let storage = MemoryTokenStorage()
        XCTAssertThrowsError(try storage.withLock("a") { throw Boom() }) { XCTAssertTrue($0 is Boom) }
        XCTAssertEqual(try storage.withLock("a") { "free" }, "free")
    }
}
