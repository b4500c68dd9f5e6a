// The `put` and `replica` modes of the probe (see main.swift): one replica of a partner's backend for make soak's
// replica trials, and the seeding of their connections.
import Foundation
import ProfirestAPI
import ProfirestPostgres

/// Stores the {"key", "value"} lines of standard input (see main.swift).
func put() {
    let storage = storage()
    var stored = 0
    while let line = readLine() {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: String],
            let key = object["key"], let value = object["value"]
        else { continue }
        do {
            try storage.set(key, value)
            stored += 1
        } catch {
            emit(["error": String(describing: error)])
            exit(1)
        }
    }
    emit(["stored": stored])
}

/// One replica: a client per connection on one storage and one transport, requests until the time is up, and the
/// moments of every token request in the log file (see main.swift).
func replica() async {
    let log: EventLog
    do {
        log = try EventLog(path: argument("log"))
    } catch {
        emit(["error": String(describing: error)])
        exit(1)
    }
    log.event(nil, "start", ["pid": Int(ProcessInfo.processInfo.processIdentifier)])
    let client = argument("client")
    let count = Int(argument("connections", "250")) ?? 250
    let interval = Double(argument("interval", "2")) ?? 2
    let margin = Double(argument("margin", "1")) ?? 1
    let end = Date().addingTimeInterval(Double(argument("seconds", "10")) ?? 10)
    let keys = (0..<count).map { "profirest-api:\(client):replica-\($0)" }
    let shared: PostgresTokenStorage
    let transport: CurlTransport
    do {
        shared = try PostgresTokenStorage(
            connectionString: argument("postgres"), table: argument("table", "profirest_tokens"),
            maximumConnections: Int(argument("pool", "8")) ?? 8)
        transport = try CurlTransport()
    } catch {
        log.event(nil, "error", ["error": String(describing: error)])
        emit(["error": String(describing: error)])
        exit(1)
    }
    let storage = WatchedStorage(shared, keys: keys, log: log, locking: !CommandLine.arguments.contains("--without-lock"))
    let dieAfter = Int(argument("die-after-answer", "0")).flatMap { $0 > 0 ? AnswerCount(limit: $0) : nil }
    let totals = Totals()
    let errorsLogged = AnswerCount(limit: 0)
    let reporter = Task {
        while !Task.isCancelled {
            try? await Task.sleep(nanoseconds: 1_000_000_000)
            log.event(nil, "totals", totals.summary(paired: true))
        }
    }
    await withTaskGroup(of: Void.self) { group in
        for index in 0..<count {
            let api = ProfirestApi(options: .init(
                baseURL: argument("base"), clientID: client, language: "en", storage: storage, storageKey: keys[index],
                timeout: 30, refreshMargin: margin,
                onUnpaired: { _ in log.event(index, "unpaired") },
                transport: WatchedTransport(inner: transport, connection: index, log: log, dieAfter: dieAfter)))
            group.addTask {
                // Spread over the first interval, so that the replica's clients do not all start at once.
                try? await Task.sleep(nanoseconds: UInt64(Double.random(in: 0...interval) * 1e9))
                while Date() < end {
                    let start = Date()
                    var outcome = "ok"
                    do {
                        _ = try await api.get("/connection")
                    } catch let e as ProfirestAPIError {
                        outcome = e.code
                    } catch {
                        outcome = String(describing: type(of: error))
                        // What went wrong, the first times (a StorageError names the server, table and key, never a
                        // password or a value).
                        if errorsLogged.add() <= 5 { log.event(index, "error", ["error": String(describing: error)]) }
                    }
                    totals.add(outcome, ms: Date().timeIntervalSince(start) * 1000)
                    // An unpaired connection stays so: nothing more to ask for it.
                    if outcome == ErrorCode.notPaired { return }
                    try? await Task.sleep(nanoseconds: UInt64(Double.random(in: 0.5...1.5) * interval * 1e9))
                }
            }
        }
    }
    reporter.cancel()
    log.event(nil, "end", totals.summary(paired: true))
    emit(totals.summary(paired: true))
}

/// Appends one JSON line per event to a file, each with one write(2) as it happens (nothing buffered, so a SIGKILL
/// loses no line that was written), in the order of their time stamps.
final class EventLog: @unchecked Sendable {
    // @unchecked: `file` is only written while `lock` is held.
    private let lock = NSLock()
    private let file: FileHandle

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) , let file = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        self.file = file
    }

    /// A line {"t", "c", "e", …extra}: never a token, only the connection's index, the event and counts.
    func event(_ connection: Int?, _ name: String, _ extra: [String: Any] = [:]) {
        lock.lock()
        defer { lock.unlock() }
        var object = extra
        object["t"] = (Date().timeIntervalSince1970 * 1e6).rounded() / 1e3
        object["e"] = name
        if let connection { object["c"] = connection }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        file.write(data + Data("\n".utf8))
    }
}

/// The transport of one connection's client: the process's CurlTransport, with the moments of each token request
/// written to the log — `ask` before it goes out, `answer` as soon as its 200 is here (before the library reads it
/// and stores the new tokens), `invalid_grant`, `refused` or `no_answer` otherwise.
struct WatchedTransport: HTTPTransport {
    let inner: CurlTransport
    let connection: Int
    let log: EventLog
    /// With --die-after-answer N: the process ends at once after the N-th `answer` line, inside the window.
    let dieAfter: AnswerCount?

    func send(_ request: HTTPRequest) async throws -> APIResponse {
        guard request.url.path.hasSuffix("/oauth/token") else { return try await inner.send(request) }
        log.event(connection, "ask")
        let response: APIResponse
        do {
            response = try await inner.send(request)
        } catch {
            log.event(connection, "no_answer")
            throw error
        }
        if response.status == 200 {
            log.event(connection, "answer")
            if let dieAfter, dieAfter.reached() {
                // Between the server's answer and the storage write, as a SIGKILL there would: no cleanup, no
                // flush, the PostgreSQL session (and with it the lock) ended by the kernel closing its socket.
                _exit(137)
            }
        } else if String(decoding: response.data, as: UTF8.self).contains("\"invalid_grant\"") {
            log.event(connection, "invalid_grant")
        } else {
            log.event(connection, "refused", ["status": response.status])
        }
        return response
    }
}

/// The replica's PostgresTokenStorage, with `stored` written to the log once a connection's document is committed
/// (the storage writes each `set` in a statement of its own, committed when it returns).
final class WatchedStorage: LockingTokenStorage, Sendable {
    private let inner: PostgresTokenStorage
    private let index: [String: Int]
    private let log: EventLog
    /// false (--without-lock, the soak's control): `withLock` runs the body without the lock.
    private let locking: Bool

    init(_ inner: PostgresTokenStorage, keys: [String], log: EventLog, locking: Bool) {
        self.inner = inner
        index = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
        self.log = log
        self.locking = locking
    }

    func get(_ key: String) throws -> String? { try inner.get(key) }

    func set(_ key: String, _ value: String) throws {
        try inner.set(key, value)
        log.event(index[key], "stored")
    }

    func remove(_ key: String) throws {
        try inner.remove(key)
        log.event(index[key], "removed")
    }

    func withLock<T>(_ key: String, _ body: () throws -> T) throws -> T {
        locking ? try inner.withLock(key, body) : try body()
    }
}

/// Counts the answers of token requests for --die-after-answer (and the errors written to the log).
final class AnswerCount: @unchecked Sendable {
    // @unchecked: `count` is only touched while `lock` is held.
    private let lock = NSLock()
    private var count = 0
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Counts one more; true at the `limit`-th.
    func reached() -> Bool { add() == limit }

    /// Counts one more; the count now.
    func add() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }
}
