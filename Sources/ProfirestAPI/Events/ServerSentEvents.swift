import Foundation

/// One dispatched event of a `text/event-stream`.
struct ServerSentEvent: Sendable, Hashable {
    /// The `event` field; `message` when the event named none.
    var type: String
    /// The `data` lines joined with a line feed.
    var data: String
    /// The last event ID when this event was dispatched (an `id` field persists until the next one); nil before
    /// any `id` field.
    var id: String?
}

/// A `text/event-stream` that does not follow the format closely enough to be read on.
struct ServerSentEventsOverflow: Error, CustomStringConvertible {
    let limit: Int
    var description: String { "an event of the stream is longer than \(limit) bytes" }
}

/// Reads a `text/event-stream` (the WHATWG HTML "server-sent events" format) from chunks cut anywhere.
///
/// Lines end with CRLF, LF or CR, also when a CRLF pair is split between two chunks. Bytes are decoded as UTF-8 one
/// whole line at a time, so a chunk boundary inside a multi-byte character does no harm, and bytes that are not
/// UTF-8 become U+FFFD instead of failing. A blank line dispatches the event gathered so far; an event without
/// `data` is not dispatched (its `id` still counts); comments (`: keep-alive`) are counted, not returned; at the end
/// of the stream an event that was not closed by a blank line is discarded, as the format says.
///
/// ```swift
/// var parser = ServerSentEvents(); let events = try parser.feed(chunk)
/// ```
struct ServerSentEvents: Sendable {
    /// The most one event (its lines and its data) may take; a stream that exceeds it is broken or hostile.
    let limit: Int
    /// The last `retry` field (reconnection time, milliseconds).
    private(set) var retry: Int?
    /// How many comment lines came (the server's keep-alives).
    private(set) var comments = 0
    /// The last event ID, as it stands after the input read so far.
    private(set) var lastEventID: String?

    private var line: [UInt8] = []
    private var afterCR = false
    private var firstLine = true
    private var eventType = ""
    private var dataLines: [String] = []
    private var eventBytes = 0

    init(limit: Int = 1 << 20) { self.limit = limit }

    /// The events completed by `chunk`, in order. Throws `ServerSentEventsOverflow` past `limit`.
    mutating func feed(_ chunk: Data) throws -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        // Read in place, a line's run of bytes at a time: a stream's chunks are mostly bytes to copy into the line.
        try chunk.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            var next = 0
            while next < bytes.count {
                if afterCR {
                    afterCR = false
                    // The second half of a CRLF: the line already ended at the CR.
                    if bytes[next] == Self.lf {
                        next += 1
                        continue
                    }
                }
                var end = next
                while end < bytes.count, bytes[end] != Self.cr, bytes[end] != Self.lf { end += 1 }
                if end > next {
                    line.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[next..<end]))
                    eventBytes += end - next
                    if eventBytes > limit { throw ServerSentEventsOverflow(limit: limit) }
                    next = end
                }
                guard next < bytes.count else { break }
                if bytes[next] == Self.cr { afterCR = true }
                if let event = endLine() { events.append(event) }
                next += 1
            }
        }
        return events
    }

    /// The stream ended: what was not closed by a blank line is dropped.
    mutating func finish() {
        line.removeAll()
        afterCR = false
        eventType = ""
        dataLines.removeAll()
        eventBytes = 0
    }

    private mutating func endLine() -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        var bytes = line[...]
        if firstLine {
            firstLine = false
            // A byte order mark may open the stream and is not part of the first field name.
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        }
        if bytes.isEmpty { return dispatch() }
        if bytes.first == Self.colon {
            comments += 1
            return nil
        }
        let field: String
        let value: String
        if let colon = bytes.firstIndex(of: Self.colon) {
            field = String(decoding: bytes[..<colon], as: UTF8.self)
            var rest = bytes[(colon + 1)...]
            if rest.first == Self.space { rest = rest.dropFirst() }
            value = String(decoding: rest, as: UTF8.self)
        } else {
            field = String(decoding: bytes, as: UTF8.self)
            value = ""
        }
        switch field {
        case "event": eventType = value
        case "data": dataLines.append(value)
        case "id":
            // An id with a NUL is ignored, so that a server cannot reset the position by mistake.
            if !value.unicodeScalars.contains("\0") { lastEventID = value }
        case "retry":
            if !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let milliseconds = Int(value) {
                retry = milliseconds
            }
        default:
            break  // unknown fields are ignored
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            eventType = ""
            dataLines.removeAll()
            eventBytes = 0
        }
        guard !dataLines.isEmpty else { return nil }
        return ServerSentEvent(
            type: eventType.isEmpty ? "message" : eventType, data: dataLines.joined(separator: "\n"), id: lastEventID)
    }

    private static let cr: UInt8 = 0x0D
    private static let lf: UInt8 = 0x0A
    private static let colon: UInt8 = 0x3A
    private static let space: UInt8 = 0x20
}
