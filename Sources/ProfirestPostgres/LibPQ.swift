import CProfirestPQ
import Foundation

/// The system's libpq, loaded once per process at run time (dlopen, through CProfirestPQ), so that building the
/// package needs neither libpq's headers nor the library: only a program that makes a ``PostgresTokenStorage`` does.
enum LibPQ {
    /// The names tried when no path is given: Debian's and most Linux distributions' soname (package libpq5), the
    /// unversioned name a -dev package adds, then macOS's (Homebrew's libpq, Postgres.app).
    static let defaultNames = [
        "libpq.so.5", "libpq.so", "libpq.5.dylib", "/opt/homebrew/opt/libpq/lib/libpq.5.dylib",
        "/usr/local/opt/libpq/lib/libpq.5.dylib",
        "/Applications/Postgres.app/Contents/Versions/latest/lib/libpq.5.dylib",
    ]

    /// Loads libpq from `path`, or from the first of `defaultNames` found, and returns its version (150018 for 15.18).
    /// The first library loaded is the one used for the life of the process; a later call only checks that its
    /// library loads. Throws a sentence saying what is missing.
    static func load(path: String?) throws -> Int {
        let names = path.map { [$0] } ?? defaultNames
        var message = [CChar](repeating: 0, count: 512)
        let status = withCStrings(names) { pfq_load($0, Int32(names.count), &message, message.count) }
        guard status == 0 else {
            let text = message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            throw LoadFailure(message: String(decoding: text, as: UTF8.self))
        }
        return Int(pfq_lib_version())
    }

    struct LoadFailure: Error {
        let message: String
    }

    /// Calls `body` with a NULL-terminated array of C copies of `strings`, freed afterwards.
    static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// A statement that failed: the server's SQLSTATE and primary message, or the connection's end.
struct QueryFailure: Error {
    /// The connection is gone (closed by the server, a network failure): whether the statement ran is unknown.
    let connectionLost: Bool
    /// The SQLSTATE, such as `42P01` (undefined table), when the server answered one.
    let sqlState: String?
    /// The server's primary message or libpq's, one line; never the statement's parameters (see `execute`).
    let message: String
}

/// One libpq connection (PGconn). libpq connections are not thread-safe: one thread uses it at a time — it is either
/// in the pool's idle list, lent to one statement, or owned by one `withLock` holder.
final class PostgresConnection: @unchecked Sendable {
    // @unchecked: `handle` is used by one thread at a time (see above) and never changes.
    private let handle: UnsafeMutableRawPointer

    private init(handle: UnsafeMutableRawPointer) {
        self.handle = handle
    }

    deinit { pfq_finish(handle) }

    /// Opens a connection: `keywords` and `values` as PQconnectdbParams takes them (with the connection string
    /// expanded from `dbname`). Throws libpq's message, which the caller redacts.
    static func open(keywords: [String], values: [String]) throws -> PostgresConnection {
        let pointer = LibPQ.withCStrings(keywords) { k in LibPQ.withCStrings(values) { v in pfq_connect(k, v, 1) } }
        guard let pointer else { throw QueryFailure(connectionLost: true, sqlState: nil, message: "out of memory") }
        let connection = PostgresConnection(handle: pointer)
        guard pfq_status(pointer) == PFQ_CONNECTION_OK else {
            throw QueryFailure(connectionLost: true, sqlState: nil, message: connection.lastError)
        }
        return connection
    }

    /// Whether this idle connection is known to be dead without asking the server: the server closed it (a restart,
    /// `pg_terminate_backend`) and its goodbye is waiting in the socket. A statement not yet sent on a dead
    /// connection certainly did not run, so it may be sent again on a new one.
    var isKnownDead: Bool { pfq_idle_connection_is_dead(handle) != 0 }

    /// Runs one statement with text parameters ($1, $2, …) and returns the first column of each row as text (nil for
    /// NULL): every statement here selects at most one column.
    ///
    /// A failure carries the SQLSTATE and the primary message only: the detail and context lines that libpq adds to
    /// the full message may quote the data, which here is a token.
    func execute(_ sql: String, _ parameters: [String] = []) -> Result<[String?], QueryFailure> {
        let result = LibPQ.withCStrings(parameters) { values in pfq_exec(handle, sql, Int32(parameters.count), values) }
        defer { if let result { pfq_clear(result) } }
        let status = result.map { pfq_result_status($0) } ?? PFQ_PGRES_FATAL_ERROR
        guard status == PFQ_PGRES_TUPLES_OK || status == PFQ_PGRES_COMMAND_OK, let result else {
            let lost = pfq_status(handle) != PFQ_CONNECTION_OK
            let state = result.flatMap { pfq_result_error_field($0, PFQ_PG_DIAG_SQLSTATE) }.map { String(cString: $0) }
            let primary = result.flatMap { pfq_result_error_field($0, PFQ_PG_DIAG_MESSAGE_PRIMARY) }
                .map { String(cString: $0) }
            return .failure(QueryFailure(connectionLost: lost, sqlState: state, message: primary ?? lastError))
        }
        return .success((0..<pfq_ntuples(result)).map { Self.text(result, $0, 0) })
    }

    /// The text of one value (the database and the connection speak UTF-8: see `ConnectionTarget`).
    private static func text(_ result: UnsafeMutableRawPointer, _ row: Int32, _ column: Int32) -> String? {
        guard pfq_get_is_null(result, row, column) == 0, let value = pfq_get_value(result, row, column) else {
            return nil
        }
        let length = Int(pfq_get_length(result, row, column))
        return UnsafeRawPointer(value).withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// libpq's last message on this connection, on one line.
    private var lastError: String {
        let text = pfq_error_message(handle).map { String(cString: $0) } ?? ""
        return Self.oneLine(text)
    }

    /// libpq's messages end in a newline and may have several lines (a hint); one line for a `StorageError`.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: "; ")
    }
}
