import Foundation

/// The outbox's file: an append-only journal of what happened to the queued writes, owner-only (0600, an owner-only
/// ACL on Windows), shared by every process that opens it, under a lock file beside it.
///
/// Each change is one record (a line) appended at the end: a write handed in (`add`, made durable before the caller
/// hears of it), a batch of punches about to be sent with its Idempotency-Key (`batch`, durable before it goes
/// out), and what a round of sending settled or left waiting (`outcome`, not synced: lost in a power cut, such a
/// record only makes the write go again with the same bytes and key, which the server answers from its records).
/// When the records nobody needs any more outweigh the live ones (and 1 MiB), the file is compacted: rewritten
/// with only the waiting writes, in a temporary file that replaces it atomically (`TokenFile.replace`). So the
/// file holds at most about twice what waits plus 1 MiB, and a delivered write costs an append, not a rewrite.
/// A round that settled punches compacts at once: a punch's record carries its PIN, which must leave the file with
/// the punch.
///
/// Crash-safe at every byte: a record is a line that ends with a newline and starts with the CRC-32 of its JSON,
/// and a record cut short (a kill or power cut in the middle of an append) is the last one — whoever takes the lock
/// next ignores it and cuts it off before appending. A damaged record *followed* by good ones cannot come from a
/// crash: that file is `StorageError.corrupt`, never silently shortened.
///
/// Each process keeps a copy (`JournalReplica`) and, under the lock, reads only the bytes appended since it last
/// looked; a compaction by another process starts a new generation (in the header line), which it reads afresh.
/// The lock file and (on POSIX) the journal stay open between locked sections: a section costs the lock, one `stat`
/// to see that the path still names the file this process has read, and the bytes it appends. A
/// journal of the first format (one JSON document, replaced on every change) is read and rewritten in this format
/// when it is first opened. On Apple platforms the file is excluded from backups: it carries PINs and belongs to
/// this device only.
final class OutboxJournal: Sendable {
    let path: String
    private let replica: Locked<JournalReplica>
    /// What stays open between locked sections; used only while `replica`'s lock is held.
    private let handles = Locked(Handles())
    /// The crash-test points: none, unless a crash test opened the journal (see `TestHooks`).
    let hooks: TestHooks

    private struct Handles {
        var lock: FileLock?
        /// The journal this process has read up to `JournalReplica.offset`, while its path still names it.
        var file: JournalFile?
    }

    /// What one delivery round sends: a request alone, or punches of one restaurant as one batch under its key.
    enum Round {
        case request(JournalEntry)
        case batch(key: String, [JournalEntry])

        var entries: [JournalEntry] {
            switch self {
            case .request(let entry): return [entry]
            case .batch(_, let entries): return entries
            }
        }
    }

    /// Opens the journal at `path` (nothing is created until the first write) and reads it, migrating a journal of
    /// the first format.
    init(path: String, hooks: TestHooks = TestHooks()) throws {
        self.path = path
        self.hooks = hooks
        replica = Locked(JournalReplica())
        try locked { _, _ in }
    }

    deinit {
        handles.withLock { $0.lock?.release() }
    }

    // MARK: - Reading (this process's copy, no I/O)

    /// The waiting writes, oldest first, as last read or written by this process.
    var snapshot: [JournalEntry] { replica.withLock { $0.live } }

    /// How many writes wait.
    var count: Int { replica.withLock { $0.slots.count } }

    /// The oldest waiting write.
    var first: JournalEntry? { replica.withLock { $0.first } }

    /// The waiting write with this id, if it still waits.
    func entry(id: String) -> JournalEntry? { replica.withLock { $0.slots[id]?.entry } }

    /// The members of the batch begun and not answered yet, while all of them still wait.
    var begunBatch: [String]? {
        replica.withLock { r in r.batch.flatMap { batch in batch.ids.allSatisfy { r.slots[$0] != nil } ? batch.ids : nil } }
    }

    /// What became of a write that left the journal, as recorded by any process sharing it (the last 256).
    func settlement(of id: String) -> JournalSettlement? { replica.withLock { $0.recent[id] } }

    // MARK: - Changes (under the file's lock, after reading what others appended)

    /// Reads what other processes appended (or compacted) since this process last looked.
    func refresh() throws {
        try locked { _, _ in }
    }

    /// Journals a new write, durably, after `check` accepted it against the journal as it stands.
    func add(_ entry: JournalEntry, check: (JournalReplica) throws -> Void) throws {
        try locked { r, file in
            try check(r)
            try append([.add(entry)], durable: true, to: &r, file: file)
        }
    }

    /// The next round to send, oldest first: a request alone, or the punch batch already begun for the oldest punch
    /// (the same members under the same key, until the server answered it), or a new batch of the consecutive
    /// punches of one restaurant (at most 100), begun durably before it is sent. Nil when nothing waits.
    func nextRound() throws -> Round? {
        try locked { r, file in try pickRound(in: &r, file: file) }
    }

    /// Begins a batch of exactly these punches (a punch sent alone after its batch was refused as a whole), or
    /// returns the key of that batch when it is already the one begun.
    func beginBatch(_ ids: [String]) throws -> String {
        try locked { r, file in
            if let batch = r.batch, batch.ids == ids { return batch.key }
            return try begin(ids, in: &r, file: file)
        }
    }

    /// Records a round's outcome: `delivered` and `refused` leave the journal, `kept` count an attempt and their
    /// code, and `closes` ends the batch the server answered (a batch not answered stays begun, to go again as it
    /// was). Not synced: see the type's comment.
    ///
    /// With `pickingNext`, when nothing was kept, it also picks the next round as `nextRound()` does, under the same
    /// lock (one section per round instead of two); nil then means "not picked" (nothing waits, or the outcome
    /// compacted the file), and the caller asks `nextRound()`.
    @discardableResult
    func record(
        delivered: [String], refused: [String: JournalSettlement.Refusal], kept: [String: String], closes: String?,
        pickingNext: Bool = false
    ) throws -> Round? {
        try locked { r, file in
            try append(
                [.outcome(delivered: delivered, refused: refused, kept: kept, closes: closes)], durable: false, to: &r,
                file: file)
            // Settled punches go at once: their records carry PINs, which leave the file with their punch.
            if r.settledPunches > 0 || r.deadBytes > max(hooks.compactionMinimum, r.liveBytes) {
                try compact(&r)
                // `file` is the replaced file now: a batch begun here would be appended to it.
                return nil
            }
            return pickingNext && kept.isEmpty ? try pickRound(in: &r, file: file) : nil
        }
    }

    // MARK: - Internals

    /// The next round (see `nextRound()`), in a locked section.
    private func pickRound(in r: inout JournalReplica, file: JournalFile?) throws -> Round? {
        guard let head = r.first else { return nil }
        guard head.kind == OutboxItem.Kind.punch.rawValue else { return .request(head) }
        if let batch = r.batch, batch.ids.first == head.id, batch.ids.allSatisfy({ r.slots[$0] != nil }) {
            return .batch(key: batch.key, batch.ids.compactMap { r.slots[$0]?.entry })
        }
        var members: [JournalEntry] = []
        for entry in r.liveSequence {
            guard members.count < 100, entry.kind == head.kind, entry.restaurantID == head.restaurantID else { break }
            members.append(entry)
        }
        return .batch(key: try begin(members.map(\.id), in: &r, file: file), members)
    }

    private func begin(_ ids: [String], in r: inout JournalReplica, file: JournalFile?) throws -> String {
        let key = UUIDv7.make(now: Date())
        try append([.batch(key: key, ids: ids)], durable: true, to: &r, file: file)
        return key
    }

    /// Runs `body` with this process's copy brought up to date with the file, under this process's lock and the
    /// file's; `file` is the journal opened for this section (nil when there is none yet).
    private func locked<R>(_ body: (inout JournalReplica, JournalFile?) throws -> R) throws -> R {
        try replica.withLock { r in
            try handles.withLock { h in
                try hooks.enter(.lock)
                let lock = try h.lock ?? FileLock.open(path: path + ".lock")
                h.lock = lock
                try lock.lock()
                defer { lock.unlock() }
                do {
                    let file = try read(into: &r, kept: h.file)
                    h.file = JournalFile.staysOpenBetweenSections ? file : nil
                    return try body(&r, file)
                } catch {
                    // The next section opens the file afresh and reads its header again.
                    h.file = nil
                    throw error
                }
            }
        }
    }

    /// Brings `r` up to date: the records appended since it last looked, or the whole file when it is new to it
    /// (another process compacted it, or it is the first look). Cuts a torn last record off. `kept` is the file this
    /// copy was read from, still open: while the path names it (a file held open keeps its identity, which no new
    /// file can take), only its new bytes are read, without opening it or reading its header.
    private func read(into r: inout JournalReplica, kept: JournalFile?) throws -> JournalFile? {
        try hooks.enter(.read)
        if let kept, r.headerLine != nil, let size = kept.sizeIfCurrent(), size >= r.offset {
            try readTail(of: kept, size: size, into: &r)
            return kept
        }
        guard let file = try JournalFile.open(path: path) else {
            r.restart(generation: nil, offset: 0)
            return nil
        }
        let size = try file.size()
        let start = try file.read(from: 0, count: min(size, 512))
        guard let firstByte = start.first(where: { !JournalRecord.isSpace($0) }) else {
            // Empty: as if there were no file (the first append writes a new one).
            r.restart(generation: nil, offset: 0)
            return file
        }
        if firstByte == UInt8(ascii: "{") {
            try migrate(file, size: size, into: &r)
            return try JournalFile.open(path: path)
        }
        guard let newline = start.firstIndex(of: UInt8(ascii: "\n")) else {
            throw corrupt("its first line is not an outbox journal's header")
        }
        let headerLine = start[start.startIndex...newline]
        if headerLine != r.headerLine || size < r.offset {
            // A file this copy has not read (the first look, or another process compacted it): from the start.
            guard let header = JournalRecord.decode(line: headerLine.dropLast()),
                case .header(let version, let generation) = header
            else {
                throw corrupt("its first line is not an outbox journal's header")
            }
            guard version == JournalRecord.version else {
                throw corrupt("it is version \(version) of the format, this library reads version \(JournalRecord.version)")
            }
            r.restart(generation: generation, offset: headerLine.count)
            r.headerLine = Data(headerLine)
            r.baseBytes = r.offset
        }
        try readTail(of: file, size: size, into: &r)
        return file
    }

    /// Applies the records after `r.offset` in a file of `size` bytes, and cuts a torn last record off.
    private func readTail(of file: JournalFile, size: Int, into r: inout JournalReplica) throws {
        guard size > r.offset else { return }
        let tail = try file.read(from: r.offset, count: size - r.offset)
        let good = try r.apply(tail, path: path)
        if good < tail.count {
            // A record cut short by a crash (its writer died holding the lock, which we hold now).
            try file.truncate(to: r.offset)
        }
    }

    /// Appends `records` (and applies them to `r` once written); `durable` syncs them to the disk before returning.
    /// A journal that does not exist yet is written whole, header first.
    private func append(
        _ records: [JournalRecord], durable: Bool, to r: inout JournalReplica, file: JournalFile?
    ) throws {
        let lines = records.map { $0.line() }
        guard r.generation != nil, let file else {
            let generation = UUIDv7.make(now: Date())
            let header = JournalRecord.header(version: JournalRecord.version, generation: generation).line()
            try replace(with: lines.reduce(header, +))
            r.restart(generation: generation, offset: header.count)
            r.headerLine = header
            r.baseBytes = header.count
            for (record, line) in zip(records, lines) { r.apply(record, bytes: line.count) }
            r.offset += lines.reduce(0) { $0 + $1.count }
            return
        }
        let data = lines.reduce(Data(), +)
        r.appends += 1
        if hooks.kill == .append(r.appends) {
            try? file.write(data.prefix(max(1, data.count / 2)), at: r.offset)
            JournalFile.killSelf()
        }
        do {
            try hooks.enter(.write)
            try file.write(data, at: r.offset)
            if durable {
                try hooks.enter(.sync)
                try file.sync()
            }
        } catch {
            // Nothing half written stays behind a failed append.
            try? file.truncate(to: r.offset)
            throw error
        }
        for (record, line) in zip(records, lines) { r.apply(record, bytes: line.count, line: line) }
        r.offset += data.count
    }

    /// Rewrites the journal with only what still matters: the waiting writes (with their attempts), the batch begun,
    /// and the latest settlements, so a process waiting for one still learns what became of it.
    private func compact(_ r: inout JournalReplica) throws {
        r.compactions += 1
        let generation = UUIDv7.make(now: Date())
        let header = JournalRecord.header(version: JournalRecord.version, generation: generation).line()
        var data = header
        let settled = JournalRecord.settled(r.recentOrder.compactMap { id in r.recent[id].map { (id, $0) } }).line()
        data += settled
        let base = data.count
        var lines: [String: Data] = [:]
        for entry in r.live {
            let line = r.slots[entry.id]?.line ?? JournalRecord.add(entry).line()
            lines[entry.id] = line
            data += line
        }
        if let batch = r.batch, batch.ids.allSatisfy({ r.slots[$0] != nil }) {
            data += JournalRecord.batch(key: batch.key, ids: batch.ids).line()
        } else {
            r.batch = nil
        }
        removeLeftovers()
        let kill = hooks.kill
        let count = r.compactions
        try replace(
            with: data, beforeRename: { if kill == .compaction(count) { JournalFile.killSelf() } },
            afterRename: { if kill == .compacted(count) { JournalFile.killSelf() } })
        r.generation = generation
        r.headerLine = header
        r.offset = data.count
        r.baseBytes = base
        r.resize(lines)
    }

    /// A journal of the first format (`{"profirest_outbox": 1, "items": […]}`), rewritten in this one.
    private func migrate(_ file: JournalFile, size: Int, into r: inout JournalReplica) throws {
        struct Document: Decodable {
            var profirestOutbox: Int
            var items: [JournalEntry]
            enum CodingKeys: String, CodingKey {
                case profirestOutbox = "profirest_outbox"
                case items
            }
        }
        let document: Document
        do {
            document = try JournalRecord.decoder.decode(Document.self, from: try file.read(from: 0, count: size))
        } catch {
            throw corrupt("it is not an outbox journal (\(error))")
        }
        r.restart(generation: "migrating", offset: 0)
        for entry in document.items where r.slots[entry.id] == nil { r.apply(.add(entry), bytes: 0) }
        try compact(&r)
    }

    private func replace(with data: Data, beforeRename: () -> Void = {}, afterRename: () -> Void = {}) throws {
        try hooks.enter(.replace)
        try TokenFile.replace(path: path, with: data, beforeRename: beforeRename, afterRename: afterRename)
        // Apple platforms (nothing elsewhere): the attribute lives on the file, and every replacement is a new file.
        FileExtras.excludeFromBackup(path: path)
    }

    /// Temporary files of compactions that a kill interrupted before their rename (under the lock, so none is in
    /// use).
    private func removeLeftovers() {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory)) ?? []
        for leftover in names where leftover.hasPrefix(".\(name).tmp-") || leftover.hasPrefix("\(name).tmp-") {
            try? FileManager.default.removeItem(atPath: (directory as NSString).appendingPathComponent(leftover))
        }
    }

    private func corrupt(_ what: String) -> StorageError {
        StorageError(
            kind: .corrupt, path: path,
            reason: "the outbox file is not an outbox journal (\(what)); move it aside to start an empty queue")
    }

    /// Crash-test points, which an app never sets: the soak's kill points and a small compaction threshold so that
    /// its short runs compact often. They reach a journal only through its initializer, from
    /// `ProfirestApi.outbox(path:killPoint:compactionBytes:)` (SPI `OutboxCrashTesting`) or a unit test.
    struct TestHooks: Sendable {
        enum KillPoint: Equatable, Sendable {
            case append(Int), compaction(Int), compacted(Int)
        }

        /// The journal's file operations, each of which a disk can refuse.
        enum Operation: String, Sendable, CaseIterable {
            case lock, read, write, sync, replace
        }

        var kill: KillPoint?
        var compactionMinimum = 1 << 20
        /// Asked before each file operation; an error it returns is that operation's failure (a disk that is full,
        /// failing or out of locks), for a test that fails every operation of a life in turn.
        var fault: (@Sendable (Operation) -> StorageError?)?

        init() {}

        func enter(_ operation: Operation) throws {
            if let fault, let error = fault(operation) { throw error }
        }

        /// `append:N` kills the process (SIGKILL) in the middle of its N-th append (half the record written),
        /// `compaction:N` in its N-th compaction after the new file is written and synced but before it replaces the
        /// journal, `compacted:N` just after; anything else kills nothing. `compactionBytes` compacts once dead
        /// records exceed that many bytes (and the live ones) instead of 1 MiB.
        init(killPoint: String?, compactionBytes: Int?) {
            if let parts = killPoint?.split(separator: ":"), parts.count == 2, let n = Int(parts[1]) {
                switch parts[0] {
                case "append": kill = .append(n)
                case "compaction": kill = .compaction(n)
                case "compacted": kill = .compacted(n)
                default: break
                }
            }
            if let compactionBytes, compactionBytes > 0 { compactionMinimum = compactionBytes }
        }
    }
}
