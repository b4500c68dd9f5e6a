import Foundation

/// One queued write as the journal file keeps it: everything needed to send it again after a restart.
struct JournalEntry: Codable, Sendable, Hashable {
    var id: String
    var kind: String
    var path: String
    /// The restaurant a punch belongs to (punches of one restaurant share a batch).
    var restaurantID: String?
    /// The exact bytes to send (a punch: its JSON object, the batch is assembled from them).
    var body: Data
    var contentType: String
    var enqueuedAt: Date
    var attempts: Int
    var lastErrorCode: String?

    enum CodingKeys: String, CodingKey {
        case id, kind, path, body, attempts
        case restaurantID = "restaurant_id"
        case contentType = "content_type"
        case enqueuedAt = "enqueued_at"
        case lastErrorCode = "last_error_code"
    }

    var item: OutboxItem {
        OutboxItem(
            id: id, kind: OutboxItem.Kind(rawValue: kind) ?? .request, path: path, enqueuedAt: enqueuedAt,
            attempts: attempts, lastErrorCode: lastErrorCode)
    }
}

/// What became of a write that left the journal, as the process that settled it recorded it — so that a process
/// waiting for a write another process sent still learns how it ended.
enum JournalSettlement: Sendable, Hashable {
    /// What a refusal keeps: enough to make the error again.
    struct Refusal: Codable, Sendable, Hashable {
        var code: String
        var status: Int
    }

    case delivered
    case refused(Refusal)
}

/// One line of the journal: `<CRC-32 of the JSON, 8 hex digits> <JSON>\n`. The CRC and the newline make a record cut
/// short by a crash recognisable, whatever byte it was cut at.
enum JournalRecord {
    /// The first line of every file: the format's version and the file's generation (new with every compaction, so a
    /// process that read an older file reads this one afresh).
    case header(version: Int, generation: String)
    /// A write handed in.
    case add(JournalEntry)
    /// A batch of punches about to be sent under `key`; it stays begun until a round's outcome closes it.
    case batch(key: String, ids: [String])
    /// What a round settled (`delivered`, `refused` leave the journal), left waiting (`kept`: one more attempt, with
    /// its code) and the batch it answered (`closes`).
    case outcome(delivered: [String], refused: [String: JournalSettlement.Refusal], kept: [String: String], closes: String?)
    /// Settlements carried into a compacted file, for processes still waiting to learn of them; removes nothing.
    case settled([(String, JournalSettlement)])

    static let version = 2

    /// The JSON object of a record, as the file spells it.
    private struct Wire: Codable {
        var op: String
        var version: Int?
        var generation: String?
        var item: JournalEntry?
        var key: String?
        var ids: [String]?
        var delivered: [String]?
        var refused: [String: JournalSettlement.Refusal]?
        var kept: [String: String]?
        var closes: String?

        enum CodingKeys: String, CodingKey {
            case op, generation, item, key, ids, delivered, refused, kept, closes
            case version = "profirest_outbox"
        }
    }

    private var wire: Wire {
        switch self {
        case .header(let version, let generation):
            return Wire(op: "header", version: version, generation: generation)
        case .add(let entry):
            return Wire(op: "add", item: entry)
        case .batch(let key, let ids):
            return Wire(op: "batch", key: key, ids: ids)
        case .outcome(let delivered, let refused, let kept, let closes):
            return Wire(
                op: "outcome", delivered: delivered.isEmpty ? nil : delivered, refused: refused.isEmpty ? nil : refused,
                kept: kept.isEmpty ? nil : kept, closes: closes)
        case .settled(let settlements):
            var delivered: [String] = []
            var refused: [String: JournalSettlement.Refusal] = [:]
            for (id, settlement) in settlements {
                switch settlement {
                case .delivered: delivered.append(id)
                case .refused(let refusal): refused[id] = refusal
                }
            }
            return Wire(op: "settled", delivered: delivered, refused: refused)
        }
    }

    private init?(_ wire: Wire) {
        switch wire.op {
        case "header":
            guard let version = wire.version, let generation = wire.generation else { return nil }
            self = .header(version: version, generation: generation)
        case "add":
            guard let item = wire.item else { return nil }
            self = .add(item)
        case "batch":
            guard let key = wire.key, let ids = wire.ids else { return nil }
            self = .batch(key: key, ids: ids)
        case "outcome":
            self = .outcome(
                delivered: wire.delivered ?? [], refused: wire.refused ?? [:], kept: wire.kept ?? [:], closes: wire.closes)
        case "settled":
            let refused = (wire.refused ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, JournalSettlement.refused($0.value)) }
            self = .settled((wire.delivered ?? []).map { ($0, .delivered) } + refused)
        default:
            return nil
        }
    }

    /// The record as a line of the file, newline included.
    func line() -> Data {
        let json = outcomeJSON ?? (try? Self.encoder.encode(wire)) ?? Data("{}".utf8)
        var line = Data(Self.hex(CRC32.checksum(json)).utf8)
        line.append(UInt8(ascii: " "))
        line.append(json)
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// An outcome's JSON, written here as the encoder would write it (sorted keys, no spaces): every round delivered
    /// appends one, and the encoder would cost more than the rest of the round's journaling. Nil for other records.
    private var outcomeJSON: Data? {
        guard case .outcome(let delivered, let refused, let kept, let closes) = self else { return nil }
        var json: [UInt8] = [UInt8(ascii: "{")]
        func key(_ name: String) {
            if json.count > 1 { json.append(UInt8(ascii: ",")) }
            Self.appendString(name, to: &json)
            json.append(UInt8(ascii: ":"))
        }
        if let closes {
            key("closes")
            Self.appendString(closes, to: &json)
        }
        if !delivered.isEmpty {
            key("delivered")
            json.append(UInt8(ascii: "["))
            for (index, id) in delivered.enumerated() {
                if index > 0 { json.append(UInt8(ascii: ",")) }
                Self.appendString(id, to: &json)
            }
            json.append(UInt8(ascii: "]"))
        }
        if !kept.isEmpty {
            key("kept")
            json.append(UInt8(ascii: "{"))
            for (index, (id, code)) in kept.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { json.append(UInt8(ascii: ",")) }
                Self.appendString(id, to: &json)
                json.append(UInt8(ascii: ":"))
                Self.appendString(code, to: &json)
            }
            json.append(UInt8(ascii: "}"))
        }
        key("op")
        Self.appendString("outcome", to: &json)
        if !refused.isEmpty {
            key("refused")
            json.append(UInt8(ascii: "{"))
            for (index, (id, refusal)) in refused.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { json.append(UInt8(ascii: ",")) }
                Self.appendString(id, to: &json)
                json.append(contentsOf: #":{"code":"#.utf8)
                Self.appendString(refusal.code, to: &json)
                json.append(contentsOf: #","status":"#.utf8)
                json.append(contentsOf: String(refusal.status).utf8)
                json.append(UInt8(ascii: "}"))
            }
            json.append(UInt8(ascii: "}"))
        }
        json.append(UInt8(ascii: "}"))
        return Data(json)
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped, the rest as its UTF-8 bytes.
    private static func appendString(_ text: String, to json: inout [UInt8]) {
        json.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                json.append(UInt8(ascii: "\\"))
                json.append(byte)
            case UInt8(ascii: "\n"): json.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): json.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): json.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let digits = String(byte, radix: 16)
                json.append(contentsOf: (#"\u00"# + (digits.count < 2 ? "0" : "") + digits).utf8)
            default:
                json.append(byte)
            }
        }
        json.append(UInt8(ascii: "\""))
    }

    /// The record of one line (without its newline), or nil when the line is not a whole, intact record.
    static func decode(line: Data) -> JournalRecord? {
        guard line.count > 9, line[line.startIndex + 8] == UInt8(ascii: " ") else { return nil }
        let json = line[(line.startIndex + 9)...]
        guard let crc = UInt32(String(decoding: line.prefix(8), as: UTF8.self), radix: 16),
            CRC32.checksum(json) == crc,
            let wire = try? decoder.decode(Wire.self, from: Data(json))
        else { return nil }
        return JournalRecord(wire)
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\t")
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }()
}

/// CRC-32 (IEEE 802.3, as zlib's `crc32`), to recognise a journal record cut short or damaged.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum<Bytes: Collection>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

/// One process's copy of the journal: the waiting writes in order, the batch begun, the latest settlements, and how
/// far into the file (of which generation) it has read.
struct JournalReplica {
    struct Slot {
        var entry: JournalEntry
        /// Tells this slot from an older one of the same id in `order` (a write handed in again after it left).
        let sequence: Int
        /// The length of its `add` line, for the compaction's arithmetic.
        var bytes: Int
        /// That line as the file holds it, when known and the entry unchanged since: a compaction writes it again as
        /// it is rather than encoding the entry anew.
        var line: Data?
    }

    var slots: [String: Slot] = [:]
    /// Ids in the order they were handed in; entries whose slot is gone or newer are skipped.
    private var order: [(sequence: Int, id: String)] = []
    private var head = 0
    private var nextSequence = 0
    var batch: (key: String, ids: [String])?
    var recent: [String: JournalSettlement] = [:]
    var recentOrder: [String] = []

    /// The file's generation this copy follows (nil: no file yet), its header line as written (compared, not decoded,
    /// on each look), and the end of the last good record read.
    var generation: String?
    var headerLine: Data?
    var offset = 0
    /// The bytes of the header and the carried settlements, which a compaction writes again anyway.
    var baseBytes = 0
    var liveBytes = 0
    /// Punches settled whose records (with their PINs) are still in the file: the next outcome compacts them away.
    var settledPunches = 0
    var appends = 0
    var compactions = 0

    /// Bytes of records nobody needs any more: settled writes, outcomes, batches.
    var deadBytes: Int { offset - liveBytes - baseBytes }

    /// Forgets everything but the counters, to read a file from the start.
    mutating func restart(generation: String?, offset: Int) {
        slots = [:]
        order = []
        head = 0
        batch = nil
        liveBytes = 0
        baseBytes = 0
        settledPunches = 0
        headerLine = nil
        self.generation = generation
        self.offset = offset
    }

    /// The waiting writes in order.
    var liveSequence: LazyMapSequence<LazyFilterSequence<ArraySlice<(sequence: Int, id: String)>>, JournalEntry> {
        let slots = self.slots
        return order[head...].lazy.filter { slots[$0.id]?.sequence == $0.sequence }.map { slots[$0.id]!.entry }
    }

    var live: [JournalEntry] { Array(liveSequence) }

    var first: JournalEntry? { liveSequence.first }

    /// Applies the records of `tail` (bytes from `offset` on) and advances `offset` past the last intact one;
    /// returns how many bytes that was. A damaged or cut record ends the reading; if an intact record follows it,
    /// the file is corrupt.
    mutating func apply(_ tail: Data, path: String) throws -> Int {
        var position = tail.startIndex
        while position < tail.endIndex {
            guard let newline = tail[position...].firstIndex(of: UInt8(ascii: "\n")),
                let record = JournalRecord.decode(line: tail[position..<newline])
            else {
                try Self.checkNothingIntactAfter(tail[position...], path: path)
                break
            }
            apply(record, bytes: newline + 1 - position, line: tail[position...newline])
            offset += newline + 1 - position
            position = newline + 1
        }
        return position - tail.startIndex
    }

    private static func checkNothingIntactAfter(_ rest: Data, path: String) throws {
        var lines = rest.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).dropFirst()
        if rest.last != UInt8(ascii: "\n") { lines = lines.dropLast() }
        if lines.contains(where: { JournalRecord.decode(line: Data($0)) != nil }) {
            throw StorageError(
                kind: .corrupt, path: path,
                reason: "the outbox file has a damaged record followed by intact ones (not a crash's torn end); "
                    + "move it aside to start an empty queue")
        }
    }

    /// Applies one record whose line is `bytes` long (`line`, when the caller has it).
    mutating func apply(_ record: JournalRecord, bytes: Int, line: Data? = nil) {
        switch record {
        case .header:
            break
        case .add(let entry):
            guard slots[entry.id] == nil else { return }
            // A copy: a slice would keep the whole tail it was read with.
            slots[entry.id] = Slot(entry: entry, sequence: nextSequence, bytes: bytes, line: line.map { Data($0) })
            order.append((nextSequence, entry.id))
            nextSequence += 1
            liveBytes += bytes
        case .batch(let key, let ids):
            batch = (key, ids)
        case .outcome(let delivered, let refused, let kept, let closes):
            for id in delivered { settle(id, .delivered, remove: true) }
            for (id, refusal) in refused { settle(id, .refused(refusal), remove: true) }
            for (id, code) in kept where slots[id] != nil {
                slots[id]!.entry.attempts += 1
                slots[id]!.entry.lastErrorCode = code
                slots[id]!.line = nil
            }
            if let closes, batch?.key == closes { batch = nil }
            advanceHead()
        case .settled(let settlements):
            for (id, settlement) in settlements { settle(id, settlement, remove: false) }
            baseBytes += bytes
        }
    }

    /// After a compaction: the `add` lines as the new file holds them.
    mutating func resize(_ lines: [String: Data]) {
        liveBytes = 0
        settledPunches = 0
        for (id, line) in lines where slots[id] != nil {
            slots[id]!.bytes = line.count
            slots[id]!.line = line
            liveBytes += line.count
        }
        order = Array(order[head...].filter { slots[$0.id]?.sequence == $0.sequence })
        head = 0
    }

    private mutating func settle(_ id: String, _ settlement: JournalSettlement, remove: Bool) {
        if remove, let slot = slots.removeValue(forKey: id) {
            liveBytes -= slot.bytes
            if slot.entry.kind == OutboxItem.Kind.punch.rawValue { settledPunches += 1 }
        }
        if recent.updateValue(settlement, forKey: id) == nil {
            recentOrder.append(id)
            if recentOrder.count > 256 { recent[recentOrder.removeFirst()] = nil }
        }
    }

    private mutating func advanceHead() {
        while head < order.count, slots[order[head].id]?.sequence != order[head].sequence { head += 1 }
        if head > 1024, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
