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

/// The outbox's file: a JSON document of the queued writes, owner-only (0600, an owner-only ACL on Windows), replaced
/// atomically (temporary file, fsync, rename — as the token file) on every change, under a lock shared with other
/// processes.
///
/// A SIGKILL at any moment leaves either the old or the new document, so a write is in the file from before its
/// first attempt until after its definitive answer. On Apple platforms the file is excluded from backups: it
/// carries PINs and belongs to this device only.
final class OutboxJournal: Sendable {
    let path: String
    /// Threads of this process; the file lock alone would block a second thread on its own descriptor anyway,
    /// but this keeps the in-memory copy consistent too.
    private let entries: Locked<[JournalEntry]>

    private struct Document: Codable {
        var profirestOutbox: Int
        var items: [JournalEntry]

        enum CodingKeys: String, CodingKey {
            case profirestOutbox = "profirest_outbox"
            case items
        }
    }

    init(path: String) throws {
        self.path = path
        entries = Locked([])
        let loaded = try Self.locked(path) { try Self.read(path) }
        entries.withLock { $0 = loaded }
    }

    /// The entries as last read or written by this process.
    var snapshot: [JournalEntry] { entries.withLock { $0 } }

    /// Reads the file afresh (another process may have changed it), applies `change` and writes the result back.
    @discardableResult
    func update<R>(_ change: (inout [JournalEntry]) throws -> R) throws -> R {
        try entries.withLock { cached in
            try Self.locked(path) {
                let before = try Self.read(path)
                var current = before
                let result = try change(&current)
                if current != before { try Self.write(current, to: path) }
                cached = current
                return result
            }
        }
    }

    private static func locked<R>(_ path: String, _ body: () throws -> R) throws -> R {
        let lock = try FileLock.acquire(path: path + ".lock")
        defer { lock.release() }
        return try body()
    }

    private static func read(_ path: String) throws -> [JournalEntry] {
        guard let data = try TokenFile.load(path: path), !data.isEmpty else { return [] }
        do {
            return try decoder.decode(Document.self, from: data).items
        } catch {
            throw StorageError(
                kind: .corrupt, path: path,
                reason: "the outbox file is not an outbox journal (\(error)); move it aside to start an empty queue")
        }
    }

    private static func write(_ entries: [JournalEntry], to path: String) throws {
        try TokenFile.replace(path: path, with: try encoder.encode(Document(profirestOutbox: 1, items: entries)))
        FileExtras.excludeFromBackup(path: path)  // Apple platforms; nothing elsewhere
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return encoder
    }()

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }()
}
