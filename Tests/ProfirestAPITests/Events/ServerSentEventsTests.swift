import Foundation
import XCTest
@testable import ProfirestAPI

final class ServerSentEventsTests: XCTestCase {
    /// The contract's example stream.
    static let sample = "retry: 2000\n\nid: ev_c_1_00000043\nevent: order.created\ndata: {\"id\": \"evt_1\", \"type\": \"order.created\", \"restaurant_id\": \"11\", \"occurred_at\": \"2026-11-29T12:01:00Z\", \"data\": {\"order_id\": \"ord_9Kx2\", \"status\": \"accepted\"}}\n\n: keep-alive\n\n"

    private func parse(_ chunks: [Data]) throws -> (events: [ServerSentEvent], parser: ServerSentEvents) {
        var parser = ServerSentEvents()
        var events: [ServerSentEvent] = []
        for chunk in chunks { events += try parser.feed(chunk) }
        return (events, parser)
    }

    private func parse(_ text: String) throws -> [ServerSentEvent] { try parse([Data(text.utf8)]).events }

    func testTheContractsExample() throws {
        let (events, parser) = try parse([Data(Self.sample.utf8)])
        XCTAssertEqual(events.count, 1)
        XCTAssertEqual(events[0].type, "order.created")
        XCTAssertEqual(events[0].id, "ev_c_1_00000043")
        XCTAssertTrue(events[0].data.hasPrefix("{\"id\": \"evt_1\""))
        XCTAssertEqual(parser.retry, 2000)
        XCTAssertEqual(parser.comments, 1)
    }

    func testEveryChunkingGivesTheSameEvents() throws {
        let text = "id: 1\r\nevent: a\r\ndata: žluťoučký kůň\r\n\r\nid: 2\rdata: x\r\rdata: y\ndata: z\n\n"
        let whole = try parse(text)
        XCTAssertEqual(whole, [
            ServerSentEvent(type: "a", data: "žluťoučký kůň", id: "1"),
            ServerSentEvent(type: "message", data: "x", id: "2"),
            ServerSentEvent(type: "message", data: "y\nz", id: "2"),
        ])
        let bytes = Array(text.utf8)
        // Byte by byte: splits every CRLF pair and every two-byte UTF-8 sequence.
        XCTAssertEqual(try parse(bytes.map { Data([$0]) }).events, whole)
        // Every cut into two pieces.
        for cut in 1..<bytes.count {
            XCTAssertEqual(try parse([Data(bytes[..<cut]), Data(bytes[cut...])]).events, whole, "cut at \(cut)")
        }
    }

    func testACRLFSplitBetweenChunksIsOneLineEnd() throws {
        // Were the LF read as a second line end, it would be a blank line dispatching early.
        let (events, _) = try parse([Data("data: a\r".utf8), Data("\ndata: b\r\n\r\n".utf8)])
        XCTAssertEqual(events.map(\.data), ["a\nb"])
    }

    func testFieldsFollowTheFormat() throws {
        let events = try parse(
            "data\n\n" + "data:no space\n\n" + "data:  two spaces\n\n" + "unknown: x\ndata: u\n\n"
                + "event\ndata: e\n\n" + ":comment\ndata: c\n\n")
        XCTAssertEqual(events.map(\.data), ["", "no space", " two spaces", "u", "e", "c"])
        XCTAssertEqual(events.map(\.type), ["message", "message", "message", "message", "message", "message"])
    }

    func testAnEventWithoutDataIsNotDispatchedButItsIdCounts() throws {
        let events = try parse("id: 7\nevent: ignored\n\ndata: next\n\n")
        XCTAssertEqual(events, [ServerSentEvent(type: "message", data: "next", id: "7")])
    }

    func testIdsPersistAndAnIdWithNulIsIgnored() throws {
        let events = try parse("id: 1\ndata: a\n\ndata: b\n\nid: x\u{0}y\ndata: c\n\nid\ndata: d\n\n")
        XCTAssertEqual(events.map(\.id), ["1", "1", "1", ""])
    }

    func testRetryTakesOnlyDigits() throws {
        let (_, parser) = try parse([Data("retry: 1500\n\nretry: 2x\n\nretry: -1\n\nretry:\n\n".utf8)])
        XCTAssertEqual(parser.retry, 1500)
    }

    func testAFinalEventWithoutBlankLineIsDiscarded() throws {
        var parser = ServerSentEvents()
        XCTAssertEqual(try parser.feed(Data("data: done\n\ndata: cut off\n".utf8)).map(\.data), ["done"])
        parser.finish()
        XCTAssertEqual(try parser.feed(Data("\n".utf8)), [], "the unfinished event was dropped at the end")
    }

    func testAByteOrderMarkOpeningTheStreamIsSkipped() throws {
        let bytes = [UInt8]([0xEF, 0xBB, 0xBF]) + Array("data: bom\n\n".utf8)
        XCTAssertEqual(try parse(bytes.map { Data([$0]) }).events.map(\.data), ["bom"])
    }

    func testBytesThatAreNotUTF8BecomeReplacementCharacters() throws {
        let bytes = Array("data: a".utf8) + [0xFF, 0xC3] + Array("\n\n".utf8)
        XCTAssertEqual(try parse([Data(bytes)]).events.first?.data, "a\u{FFFD}\u{FFFD}")
    }

    func testAnOverlongEventThrows() {
        var parser = ServerSentEvents(limit: 64)
        XCTAssertThrowsError(try parser.feed(Data(("data: " + String(repeating: "x", count: 100)).utf8))) { error in
            XCTAssertTrue(error is ServerSentEventsOverflow)
        }
        var fine = ServerSentEvents(limit: 64)
        // The limit is per event: many small events pass.
        XCTAssertEqual(try fine.feed(Data(String(repeating: "data: 0123456789\n\n", count: 50).utf8)).count, 50)
    }

    func testRandomChunkingsOfManyEvents() throws {
        var text = ""
        for i in 0..<40 { text += "id: c\(i)\r\nevent: t\(i % 3)\ndata: {\"n\": \(i), \"s\": \"ř\(i)\"}\r\n: ka\r\r" }
        let whole = try parse(text)
        XCTAssertEqual(whole.count, 40)
        var generator = SeededGenerator(seed: 42)
        let bytes = Array(text.utf8)
        for _ in 0..<50 {
            var chunks: [Data] = []
            var index = 0
            while index < bytes.count {
                let size = Int.random(in: 1...17, using: &generator)
                chunks.append(Data(bytes[index..<min(index + size, bytes.count)]))
                index += size
            }
            XCTAssertEqual(try parse(chunks).events, whole)
        }
    }
}

/// A small deterministic generator (SplitMix64) so random chunkings repeat.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
