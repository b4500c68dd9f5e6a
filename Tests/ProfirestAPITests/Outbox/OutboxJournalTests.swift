import Foundation
import XCTest
@testable import ProfirestAPI

/// The outbox's journal file itself: append-only records, crash-safe at every byte, compacted, shared by several
/// processes (here several journals on one file, each with its own copy and its own lock descriptor, as processes
/// have), and the first format migrated.
final class OutboxJournalTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    var path: String { directory.appendingPathComponent("outbox.json").path }

    private func entry(_ id: String, kind: String = "request", size: Int = 40) -> JournalEntry {
        JournalEntry(
            id: id, kind: kind, path: kind == "punch" ? "/restaurants/11/attendance/punches" : "/customers",
            restaurantID: kind == "punch" ? "11" : nil, body: Data(String(repeating: "x", count: size).utf8),
            contentType: "application/json", enqueuedAt: Date(timeIntervalSince1970: 1_790_000_000), attempts: 0,
            lastErrorCode: nil)
    }

    private func ids(_ journal: OutboxJournal) -> [String] { journal.snapshot.map(\.id) }

    private func bytes() -> Data { FileManager.default.contents(atPath: path) ?? Data() }

    /// What a journal opened afresh on `data` holds: its waiting writes with their attempts, and the batch begun.
    private func reopened(_ data: Data) throws -> (entries: [String], attempts: [Int], batch: [String]?) {
        try data.write(to: URL(fileURLWithPath: path))
        let journal = try OutboxJournal(path: path)
        let round = try journal.nextRoundIfBegun()
        return (ids(journal), journal.snapshot.map(\.attempts), round)
    }

    /// Every byte offset inside the last records: opening never fails, everything before the torn record is there,
    /// the torn record is ignored — and cut off, so the next append lands on a clean end.
    func testEveryByteOfTheLastRecordsMayBeTorn() throws {
        let journal = try OutboxJournal(path: path)
        // The states after each record, with the file's length then.
        var states: [(length: Int, entries: [String], attempts: [Int], batch: [String]?)] = []
        func note() throws {
            states.append((bytes().count, ids(journal), journal.snapshot.map(\.attempts), try journal.nextRoundIfBegun()))
        }
        try journal.add(entry("a")) { _ in }
        try note()
        try journal.add(entry("p1", kind: "punch")) { _ in }
        try note()
        try journal.add(entry("p2", kind: "punch")) { _ in }
        try note()
        try journal.record(delivered: ["a"], refused: [:], kept: [:], closes: nil)
        try note()
        _ = try journal.nextRound()  // begins the batch p1, p2 (durably)
        try note()
        try journal.record(delivered: [], refused: [:], kept: ["p1": "network_error", "p2": "network_error"], closes: nil)
        try note()
        try journal.add(entry("b", size: 120)) { _ in }
        try note()
        let whole = bytes()
        let tornFrom = states[states.count - 5].length  // the last four records, byte by byte
        for cut in tornFrom...whole.count {
            let expected = states.last { $0.length <= cut }!
            let got = try reopened(whole.prefix(cut))
            XCTAssertEqual(got.entries, expected.entries, "cut at \(cut)")
            XCTAssertEqual(got.attempts, expected.attempts, "cut at \(cut)")
            XCTAssertEqual(got.batch, expected.batch, "cut at \(cut)")
            XCTAssertEqual(bytes().count, expected.length, "the torn record was cut off (at \(cut))")
            // Appending after it (with its fsync) at the records' ends and every few bytes between.
            guard states.contains(where: { $0.length == cut }) || cut % 11 == 0 else { continue }
            let next = try OutboxJournal(path: path)
            try next.add(entry("after")) { _ in }
            XCTAssertEqual(ids(try OutboxJournal(path: path)), expected.entries + ["after"], "cut at \(cut)")
        }
    }

    /// A power cut can leave zeros after the last record: ignored like a torn record. A damaged record with intact
    /// ones after it is no crash's doing: corrupt, never silently shortened.
    func testAZeroFilledTailIsIgnoredAndDamageInTheMiddleIsCorrupt() throws {
        let journal = try OutboxJournal(path: path)
        for id in ["a", "b", "c"] { try journal.add(entry(id)) { _ in } }
        let whole = bytes()
        XCTAssertEqual(try reopened(whole + Data(repeating: 0, count: 700)).entries, ["a", "b", "c"])
        XCTAssertEqual(bytes(), whole)

        var damaged = whole
        let secondLine = damaged.firstIndex(of: UInt8(ascii: "\n"))! + 1
        let thirdLine = damaged[secondLine...].firstIndex(of: UInt8(ascii: "\n"))! + 1
        damaged[thirdLine + 20] ^= 0x20  // inside the record of "a", followed by those of "b" and "c"
        try damaged.write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try OutboxJournal(path: path)) { error in
            XCTAssertEqual((error as? StorageError)?.kind, .corrupt)
        }
    }

    /// A journal of the first format (one JSON document) is read and rewritten in this one on first open, with its
    /// writes, their order, their attempts, and owner-only.
    func testAJournalOfTheFirstFormatIsMigratedOnOpen() throws {
        var a = entry("k-old")
        a.attempts = 3
        a.lastErrorCode = "network_error"
        let b = entry("p-1", kind: "punch")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        struct Document: Encodable {
            let profirest_outbox = 1
            let items: [JournalEntry]
        }
        try encoder.encode(Document(items: [a, b])).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)

        let journal = try OutboxJournal(path: path)
        XCTAssertEqual(journal.snapshot, [a, b])
        XCTAssertTrue(String(decoding: bytes(), as: UTF8.self).contains("\"op\":\"header\""), "rewritten in the new format")
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int, 0o600)
        XCTAssertEqual(try OutboxJournal(path: path).snapshot, [a, b])
        try journal.record(delivered: ["k-old"], refused: [:], kept: [:], closes: nil)
        XCTAssertEqual(ids(try OutboxJournal(path: path)), ["p-1"])
    }

    /// Delivering costs an append per round, and the file is compacted when dead records outweigh the live ones (and
    /// the minimum): it stays within about twice what waits plus that minimum, and a journal that read the older
    /// generation follows the new one.
    func testCompactionBoundsTheFileAndOthersFollowIt() throws {
        var hooks = OutboxJournal.TestHooks()
        hooks.compactionMinimum = 4096
        let journal = try OutboxJournal(path: path, hooks: hooks)
        let other = try OutboxJournal(path: path, hooks: hooks)
        var largest = 0
        for round in 0..<150 {
            try journal.add(entry("w\(round)", size: 100)) { _ in }
            try journal.add(entry("v\(round)", size: 100)) { _ in }
            try journal.record(delivered: ["w\(round)"], refused: [:], kept: ["v\(round)": "timeout"], closes: nil)
            if round % 2 == 1 { try journal.record(delivered: ["v\(round - 1)", "v\(round)"], refused: [:], kept: [:], closes: nil) }
            largest = max(largest, bytes().count)
            if round % 37 == 0 {
                try other.refresh()
                XCTAssertEqual(ids(other), ids(journal), "round \(round)")
            }
        }
        let oneLine = JournalRecord.add(entry("w0", size: 100)).line().count
        XCTAssertLessThan(largest, 4096 + 6 * oneLine + 4096, "bounded by the live records and the minimum")
        XCTAssertEqual(try OutboxJournal(path: path).snapshot.count, 0)
        try other.refresh()
        XCTAssertEqual(other.count, 0)
    }

    /// Two journals on one file, as two processes: each sees what the other added and settled, a batch begun by
    /// one is the batch the other sends, and a settlement reaches the one that waits for it.
    func testTwoProcessesShareOneFile() throws {
        let one = try OutboxJournal(path: path)
        let two = try OutboxJournal(path: path)
        try one.add(entry("p1", kind: "punch")) { _ in }
        try two.add(entry("p2", kind: "punch")) { _ in }
        XCTAssertThrowsError(try two.add(entry("p1", kind: "punch")) { journal in
            if journal.slots["p1"] != nil { throw ProfirestUsageError("twice") }
        })
        guard case .batch(let key, let members)? = try one.nextRound() else { return XCTFail("a batch") }
        XCTAssertEqual(members.map(\.id), ["p1", "p2"])
        guard case .batch(let same, _)? = try two.nextRound() else { return XCTFail("a batch") }
        XCTAssertEqual(same, key, "the other process sends the begun batch under its key")
        try two.record(delivered: ["p1"], refused: ["p2": .init(code: "staff_credentials_invalid", status: 401)], kept: [:], closes: key)
        try one.refresh()
        XCTAssertEqual(one.count, 0)
        XCTAssertEqual(one.settlement(of: "p1"), .delivered)
        XCTAssertEqual(one.settlement(of: "p2"), .refused(.init(code: "staff_credentials_invalid", status: 401)))
    }

    /// A compaction killed before its rename leaves a temporary file and the journal as it was; the next compaction
    /// removes the leftover.
    func testALeftoverOfAnInterruptedCompactionIsRemoved() throws {
        var hooks = OutboxJournal.TestHooks()
        hooks.compactionMinimum = 1
        let journal = try OutboxJournal(path: path, hooks: hooks)
        try journal.add(entry("a")) { _ in }
        let leftover = directory.appendingPathComponent(".outbox.json.tmp-0badc0de").path
        XCTAssertTrue(FileManager.default.createFile(atPath: leftover, contents: Data("half a compaction".utf8)))
        try journal.add(entry("b")) { _ in }
        try journal.record(delivered: ["a"], refused: [:], kept: [:], closes: nil)
        XCTAssertFalse(FileManager.default.fileExists(atPath: leftover))
        XCTAssertEqual(ids(try OutboxJournal(path: path)), ["b"])
    }

    /// The crash points reach a journal through its initializer only: the library reads no environment, so a
    /// variable named like one in an app's process (`PROFIREST_TEST_OUTBOX_KILL`) changes nothing.
    func testTheCrashPointsComeFromTheInitializerOnly() throws {
        setenv("PROFIREST_TEST_OUTBOX_KILL", "append:1", 1)
        setenv("PROFIREST_TEST_OUTBOX_COMPACT_BYTES", "512", 1)
        defer {
            unsetenv("PROFIREST_TEST_OUTBOX_KILL")
            unsetenv("PROFIREST_TEST_OUTBOX_COMPACT_BYTES")
        }
        let plain = try OutboxJournal(path: path)
        XCTAssertNil(plain.hooks.kill)
        XCTAssertEqual(plain.hooks.compactionMinimum, 1 << 20)
        let hooks = OutboxJournal.TestHooks(killPoint: "compaction:2", compactionBytes: 512)
        XCTAssertEqual(hooks.kill, .compaction(2))
        XCTAssertEqual(hooks.compactionMinimum, 512)
        XCTAssertEqual(OutboxJournal.TestHooks(killPoint: "append:7", compactionBytes: nil).kill, .append(7))
        XCTAssertEqual(OutboxJournal.TestHooks(killPoint: "compacted:3", compactionBytes: nil).kill, .compacted(3))
        XCTAssertNil(OutboxJournal.TestHooks(killPoint: "sometime", compactionBytes: 0).kill)
        XCTAssertEqual(OutboxJournal.TestHooks(killPoint: nil, compactionBytes: 0).compactionMinimum, 1 << 20)
    }
}

extension OutboxJournal {
    /// The members of the batch begun for the oldest write, without beginning one (nil when none is begun).
    func nextRoundIfBegun() throws -> [String]? {
        try refresh()
        return begunBatch
    }
}
