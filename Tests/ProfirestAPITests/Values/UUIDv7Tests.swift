import XCTest
@testable import ProfirestAPI

final class UUIDv7Tests: XCTestCase {
    private func timestamp(of id: String) -> UInt64 {
        let hex = id.replacingOccurrences(of: "-", with: "").prefix(12)
        return UInt64(hex, radix: 16)!
    }

    /// The 16 bytes the string spells, parsed directly: this runs 100 000 times in a debug build.
    private func bytes(of id: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16)
        var high: UInt8?
        for c in id.utf8 where c != UInt8(ascii: "-") {
            let nibble = c <= UInt8(ascii: "9") ? c - UInt8(ascii: "0") : c - UInt8(ascii: "a") + 10
            if let h = high {
                out.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return out
    }

    func testFormatVersionAndVariant() {
        let pattern = try! NSRegularExpression(
            pattern: "^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
        for _ in 0..<1000 {
            let id = UUIDv7.make(now: Date())
            XCTAssertEqual(id.count, 36)
            XCTAssertEqual(pattern.numberOfMatches(in: id, range: NSRange(location: 0, length: 36)), 1, id)
            let b = bytes(of: id)
            XCTAssertEqual(b[6] >> 4, 7, "version")
            XCTAssertEqual(b[8] >> 6, 0b10, "variant")
            XCTAssertEqual(UUID(uuidString: id)?.uuidString.lowercased(), id, "Foundation parses it back")
        }
    }

    func testTimestampIsTheGivenMillisecond() {
        let generator = UUIDv7Generator()
        let date = Date(timeIntervalSince1970: 1_700_000_000.1239)
        XCTAssertEqual(timestamp(of: generator.next(now: date)), 1_700_000_000_123)

        let before = UInt64(Date().timeIntervalSince1970 * 1000)
        let id = UUIDGeneratorForNow.next()
        let after = UInt64(Date().timeIntervalSince1970 * 1000)
        XCTAssertGreaterThanOrEqual(timestamp(of: id) + 1, before)
        XCTAssertLessThanOrEqual(timestamp(of: id), after + 1)
    }

    func testHundredThousandIdsAreStrictlyIncreasing() {
        let generator = UUIDv7Generator()
        var previous = generator.next(now: Date())
        var previousBytes = bytes(of: previous)
        var outOfOrder = 0
        for _ in 0..<100_000 {
            let id = generator.next(now: Date())
            let idBytes = bytes(of: id)
            if !(previous < id) || !previousBytes.lexicographicallyPrecedes(idBytes) { outOfOrder += 1 }
            previous = id
            previousBytes = idBytes
        }
        XCTAssertEqual(outOfOrder, 0, "ids not strictly greater than their predecessor (as strings or bytes)")
    }

    func testClockGoingBackwardsKeepsOrderAndTheLastTimestamp() {
        let generator = UUIDv7Generator()
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let first = generator.next(now: now)
        let second = generator.next(now: now.addingTimeInterval(-10))
        XCTAssertLessThan(first, second)
        XCTAssertEqual(timestamp(of: second), 1_700_000_000_000)
        let third = generator.next(now: now.addingTimeInterval(1))
        XCTAssertEqual(timestamp(of: third), 1_700_000_001_000, "a clock that moves forward again is followed")
    }

    func testCounterOverflowBorrowsTheNextMillisecond() {
        let generator = UUIDv7Generator()
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        var ids: [String] = []
        for _ in 0..<5000 { ids.append(generator.next(now: now)) }
        XCTAssertEqual(ids, ids.sorted())
        XCTAssertEqual(Set(ids).count, ids.count)
        // The counter starts below 2048 and holds 4096 values, so 5000 ids need one or two extra milliseconds.
        let last = timestamp(of: ids.last!)
        XCTAssertTrue((1_700_000_000_001...1_700_000_000_002).contains(last), "\(last)")
    }

    func testDatesOutsideTheRangeAreClamped() {
        let generator = UUIDv7Generator()
        XCTAssertEqual(timestamp(of: generator.next(now: Date(timeIntervalSince1970: -5))), 0)
        XCTAssertEqual(timestamp(of: UUIDv7Generator().next(now: .distantFuture)), 64_092_211_200_000, "year 4001 fits")
        XCTAssertEqual(timestamp(of: UUIDv7Generator().next(now: Date(timeIntervalSince1970: 1e15))), (1 << 48) - 1)
    }

    func testConcurrentGenerationYieldsNoDuplicates() async {
        let perTask = 2000, tasks = 16
        let ids = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<tasks {
                group.addTask { (0..<perTask).map { _ in UUIDv7.make(now: Date()) } }
            }
            var all: [String] = []
            for await chunk in group {
                XCTAssertEqual(chunk, chunk.sorted(), "each task sees its own ids in order")
                all += chunk
            }
            return all
        }
        XCTAssertEqual(ids.count, perTask * tasks)
        XCTAssertEqual(Set(ids).count, ids.count)
    }

    func testConcurrentGenerationOnThreadsYieldsNoDuplicates() {
        let results = IdBox()
        let finished = runOnThreads(8) { _ in
            results.add((0..<5000).map { _ in UUIDv7.make(now: Date()) })
        }
        XCTAssertTrue(finished)
        XCTAssertEqual(results.all.count, 40_000)
        XCTAssertEqual(Set(results.all).count, 40_000)
    }

    /// `ProfirestApi.uuid()`, the public way to one (moved from Client/RequestBuildingTests).
    func testUUIDIsVersion7AndStrictlyIncreasing() {
        var previous = ""
        for _ in 0..<2_000 {
            let id = ProfirestApi.uuid()
            XCTAssertEqual(id.count, 36)
            XCTAssertEqual(Array(id)[14], "7")
            XCTAssertTrue("89ab".contains(Array(id)[19]))
            XCTAssertGreaterThan(id, previous)
            previous = id
        }
    }
}

private final class IdBox: @unchecked Sendable {
    // @unchecked: `ids` is only touched while `lock` is held.
    private let lock = NSLock()
    private var ids: [String] = []

    func add(_ more: [String]) {
        lock.lock()
        ids += more
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return ids
    }
}

/// A generator of its own, so other tests' bursts on the shared one cannot have pushed its clock ahead.
private enum UUIDGeneratorForNow {
    static func next() -> String { UUIDv7Generator().next(now: Date()) }
}
