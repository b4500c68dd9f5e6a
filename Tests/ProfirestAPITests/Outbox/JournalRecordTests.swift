import Foundation
import XCTest
@testable import ProfirestAPI

/// `JournalRecord.swift`: a record a line — `<CRC-32 of the JSON, 8 hex digits> <JSON>\n` — that reads back as it was
/// written, and is rejected when damaged or cut short; `JournalReplica`, a process's copy, following the records; and
/// `JournalEntry` as the app sees it. (The file around them: OutboxJournalTests.)
final class JournalRecordTests: XCTestCase {
    private func entry(_ id: String, kind: String = "request", attempts: Int = 0) -> JournalEntry {
        JournalEntry(
            id: id, kind: kind, path: kind == "punch" ? "/restaurants/11/attendance/punches" : "/customers",
            restaurantID: kind == "punch" ? "11" : nil, body: Data(#"{"credential":{"secret":"739164"}}"#.utf8),
            contentType: "application/json", enqueuedAt: Harness.now, attempts: attempts, lastErrorCode: nil)
    }

    private let refusal = JournalSettlement.Refusal(code: ErrorCode.staffCredentialsInvalid, status: 401)

    private var everyKind: [JournalRecord] {
        [
            .header(version: JournalRecord.version, generation: "gen-1"),
            .add(entry("a")),
            .add(entry("p1", kind: "punch")),
            .batch(key: "batch-key-1", ids: ["p1", "p2"]),
            .outcome(delivered: ["a"], refused: ["p2": refusal], kept: ["p1": ErrorCode.networkError], closes: "batch-key-1"),
            .outcome(delivered: [], refused: [:], kept: [:], closes: nil),
            .settled([("a", .delivered), ("p2", .refused(refusal))]),
        ]
    }

    /// A line without its newline, as the reader hands it to `decode`.
    private func bare(_ line: Data) -> Data { line.dropLast() }

    func testEveryKindOfRecordReadsBackAsItWasWritten() throws {
        for record in everyKind {
            let line = record.line()
            XCTAssertEqual(line.last, UInt8(ascii: "\n"))
            let read = try XCTUnwrap(JournalRecord.decode(line: bare(line)), String(decoding: line, as: UTF8.self))
            XCTAssertEqual(read.line(), line, "the same record, byte for byte")
        }
        guard case .add(let read)? = JournalRecord.decode(line: bare(JournalRecord.add(entry("p1", kind: "punch")).line())) else {
            return XCTFail("an add")
        }
        XCTAssertEqual(read, entry("p1", kind: "punch"))
        guard case .outcome(let delivered, let refused, let kept, let closes)? = JournalRecord.decode(line: bare(everyKind[4].line()))
        else { return XCTFail("an outcome") }
        XCTAssertEqual(delivered, ["a"])
        XCTAssertEqual(refused, ["p2": refusal])
        XCTAssertEqual(kept, ["p1": ErrorCode.networkError])
        XCTAssertEqual(closes, "batch-key-1")
        guard case .settled(let settlements)? = JournalRecord.decode(line: bare(everyKind[6].line())) else {
            return XCTFail("settlements")
        }
        XCTAssertEqual(settlements.map { $0.0 }, ["a", "p2"])
        XCTAssertEqual(settlements.map { $0.1 }, [.delivered, .refused(refusal)])
    }

    /// An outcome's JSON is written by hand (it is appended for every round delivered): the same bytes as the
    /// encoder's, and ids with quotes, backslashes, control characters or any Unicode read back as they were.
    func testAnOutcomeIsWrittenAsTheEncoderWouldWriteIt() throws {
        struct Outcome: Encodable {
            var closes: String?
            var delivered: [String]?
            var kept: [String: String]?
            var op = "outcome"
            var refused: [String: JournalSettlement.Refusal]?
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let ids = ["a", "bench-9999", #"say "hi""#, #"back\slash"#, "with/slash", "Nováková ✓ 🍕", "tab\there"]
        for id in ids {
            let records: [(JournalRecord, Outcome)] = [
                (.outcome(delivered: [id], refused: [:], kept: [:], closes: nil), Outcome(delivered: [id])),
                (
                    .outcome(delivered: [id, "b"], refused: ["r": refusal], kept: [id: ErrorCode.networkError], closes: id),
                    Outcome(closes: id, delivered: [id, "b"], kept: [id: ErrorCode.networkError], refused: ["r": refusal])
                ),
                (.outcome(delivered: [], refused: [id: refusal], kept: [:], closes: nil), Outcome(refused: [id: refusal])),
            ]
            for (record, expected) in records {
                let line = record.line()
                XCTAssertEqual(
                    String(decoding: line.dropFirst(9).dropLast(), as: UTF8.self),
                    String(decoding: try encoder.encode(expected), as: UTF8.self))
            }
        }
        for id in ids + ["\u{1}\u{1f}\n\r\u{7f}", ""] {
            let record = JournalRecord.outcome(
                delivered: [id], refused: [id + "r": refusal], kept: [id + "k": id], closes: id)
            guard case .outcome(let delivered, let refused, let kept, let closes)? = JournalRecord.decode(line: bare(record.line()))
            else { return XCTFail("an outcome with \(id.debugDescription)") }
            XCTAssertEqual(delivered, [id])
            XCTAssertEqual(refused, [id + "r": refusal])
            XCTAssertEqual(kept, [id + "k": id])
            XCTAssertEqual(closes, id)
        }
    }

    func testALineIsTheCRCOfItsJSONASpaceAndTheJSON() throws {
        let line = JournalRecord.header(version: 2, generation: "gen-1").line()
        let text = String(decoding: line, as: UTF8.self)
        let json = #"{"generation":"gen-1","op":"header","profirest_outbox":2}"#
        XCTAssertEqual(text, String(format: "%08x", CRC32.checksum(Data(json.utf8))) + " " + json + "\n")
        let add = String(decoding: JournalRecord.add(entry("p1", kind: "punch")).line(), as: UTF8.self)
        for member in [#""op":"add""#, #""restaurant_id":"11""#, #""content_type":"application/json""#, #""enqueued_at":"#] {
            XCTAssertTrue(add.contains(member), "\(member) in \(add)")
        }
    }

    func testTheCRCIsZlibsCRC32() {
        XCTAssertEqual(CRC32.checksum(Data("123456789".utf8)), 0xCBF4_3926)
        XCTAssertEqual(CRC32.checksum(Data()), 0)
        XCTAssertEqual(CRC32.checksum([UInt8]("The quick brown fox jumps over the lazy dog".utf8)), 0x414F_A339)
    }

    func testALineCutShortAnywhereIsRejected() {
        for record in everyKind {
            let line = bare(record.line())
            for cut in 0..<line.count {
                XCTAssertNil(JournalRecord.decode(line: line.prefix(cut)), "\(record) cut at \(cut)")
            }
        }
    }

    func testADamagedLineIsRejected() {
        let line = bare(JournalRecord.add(entry("a")).line())
        for index in [0, 7, 8, 9, line.count / 2, line.count - 1] {
            var damaged = line
            damaged[index] ^= 0x01
            XCTAssertNil(JournalRecord.decode(line: damaged), "a bit flipped at \(index)")
        }
        XCTAssertNil(JournalRecord.decode(line: Data(repeating: 0, count: line.count)), "zeros")
        // A record whose CRC is right but which is no record of this format.
        for json in [#"{"op":"nope"}"#, #"{"op":"add"}"#, #"{"op":"batch","key":"k"}"#, #"{"op":"header","generation":"g"}"#, "[1,2]"] {
            let crc = String(format: "%08x", CRC32.checksum(Data(json.utf8)))
            XCTAssertNil(JournalRecord.decode(line: Data((crc + " " + json).utf8)), json)
        }
        XCTAssertNotNil(JournalRecord.decode(line: Data((String(format: "%08x", CRC32.checksum(Data(#"{"op":"outcome"}"#.utf8)))
            + " " + #"{"op":"outcome"}"#).utf8)), "an outcome that settled nothing is a record")
    }

    /// What the reader skips after the last record (a power cut's zeros) and between the CRC and the JSON.
    func testTheSpacesTheReaderSkips() {
        for byte in " \n\r\t".utf8 { XCTAssertTrue(JournalRecord.isSpace(byte)) }
        for byte in [UInt8(0), UInt8(ascii: "x"), UInt8(ascii: "{")] { XCTAssertFalse(JournalRecord.isSpace(byte)) }
    }

    // MARK: JournalReplica

    private func lines(_ records: [JournalRecord]) -> Data { records.map { $0.line() }.reduce(Data(), +) }

    func testAReplicaFollowsTheRecordsInOrder() throws {
        var replica = JournalReplica()
        let adds = [entry("a"), entry("p1", kind: "punch"), entry("p2", kind: "punch")].map { JournalRecord.add($0).line() }
        let tail = lines([.header(version: 2, generation: "gen-1")]) + adds.reduce(Data(), +) + lines([
            .batch(key: "k1", ids: ["p1", "p2"]),
            .outcome(delivered: ["a"], refused: [:], kept: ["p1": ErrorCode.networkError, "p2": ErrorCode.timeout], closes: nil),
        ])
        XCTAssertEqual(try replica.apply(tail, path: "outbox.json"), tail.count)
        XCTAssertEqual(replica.offset, tail.count)
        XCTAssertEqual(replica.live.map(\.id), ["p1", "p2"])
        XCTAssertEqual(replica.first?.id, "p1")
        XCTAssertEqual(replica.live.map(\.attempts), [1, 1], "kept: one more attempt each")
        XCTAssertEqual(replica.live.map(\.lastErrorCode), [ErrorCode.networkError, ErrorCode.timeout])
        XCTAssertEqual(replica.batch?.key, "k1", "not closed by an outcome that does not name it")
        XCTAssertEqual(replica.batch?.ids, ["p1", "p2"])
        XCTAssertEqual(replica.recent["a"], .delivered)
        XCTAssertEqual(replica.liveBytes, adds[1].count + adds[2].count)

        let closing = lines([.outcome(delivered: ["p1"], refused: ["p2": refusal], kept: [:], closes: "k1")])
        XCTAssertEqual(try replica.apply(closing, path: "outbox.json"), closing.count)
        XCTAssertNil(replica.batch)
        XCTAssertEqual(replica.live.map(\.id), [])
        XCTAssertNil(replica.first)
        XCTAssertEqual(replica.recent["p1"], .delivered)
        XCTAssertEqual(replica.recent["p2"], .refused(refusal))
        XCTAssertEqual(replica.settledPunches, 2, "their PINs are still in the file")
        XCTAssertEqual(replica.liveBytes, 0)
        XCTAssertEqual(replica.deadBytes, replica.offset - replica.baseBytes)
    }

    func testAnIdAddedTwiceWaitsOnceAndAgainOnlyAfterItLeft() throws {
        var replica = JournalReplica()
        _ = try replica.apply(lines([.add(entry("a")), .add(entry("b")), .add(entry("a", attempts: 5))]), path: "x")
        XCTAssertEqual(replica.live.map(\.id), ["a", "b"])
        XCTAssertEqual(replica.live.map(\.attempts), [0, 0], "the first add stands")
        _ = try replica.apply(lines([.outcome(delivered: ["a"], refused: [:], kept: [:], closes: nil), .add(entry("a", attempts: 5))]), path: "x")
        XCTAssertEqual(replica.live.map(\.id), ["b", "a"], "handed in again after it left: behind the others")
        XCTAssertEqual(replica.live.last?.attempts, 5)
    }

    func testSettlementsCarriedIntoACompactedFileRemoveNothing() throws {
        var replica = JournalReplica()
        let settled = lines([.settled([("gone", .refused(refusal))])])
        _ = try replica.apply(lines([.add(entry("a"))]) + settled, path: "x")
        XCTAssertEqual(replica.live.map(\.id), ["a"])
        XCTAssertEqual(replica.recent["gone"], .refused(refusal))
        XCTAssertEqual(replica.baseBytes, settled.count)
        _ = try replica.apply(lines([.settled([("a", .delivered)])]), path: "x")
        XCTAssertEqual(replica.live.map(\.id), ["a"], "a settlement carried over is news for waiters, not a removal")
    }

    /// A crash's torn end stops the reading before it; a damaged record with intact ones after it is corruption.
    func testATornEndIsLeftUnreadAndDamageBeforeIntactRecordsIsCorrupt() throws {
        let whole = lines([.add(entry("a")), .add(entry("b"))])
        let next = JournalRecord.add(entry("c")).line()
        for tail in [whole + next.prefix(next.count / 2), whole + next.dropLast(), whole + Data(repeating: 0, count: 700)] {
            var replica = JournalReplica()
            XCTAssertEqual(try replica.apply(tail, path: "x"), whole.count)
            XCTAssertEqual(replica.offset, whole.count)
            XCTAssertEqual(replica.live.map(\.id), ["a", "b"])
        }
        var damaged = whole
        damaged[20] ^= 0x20
        var replica = JournalReplica()
        XCTAssertThrowsError(try replica.apply(damaged + next, path: "outbox.json")) { error in
            XCTAssertEqual((error as? StorageError)?.kind, .corrupt)
        }
    }

    // MARK: JournalEntry

    func testAnEntryIsShownAsAnItemWithoutItsBody() {
        var stored = entry("p1", kind: "punch", attempts: 3)
        stored.lastErrorCode = ErrorCode.networkError
        let item = stored.item
        XCTAssertEqual(item.id, "p1")
        XCTAssertEqual(item.kind, .punch)
        XCTAssertEqual(item.path, "/restaurants/11/attendance/punches")
        XCTAssertEqual(item.enqueuedAt, Harness.now)
        XCTAssertEqual(item.attempts, 3)
        XCTAssertEqual(item.lastErrorCode, ErrorCode.networkError)
        var unknown = entry("x")
        unknown.kind = "something-newer"
        XCTAssertEqual(unknown.item.kind, .request, "a kind this version does not know is shown as a request")
    }
}
