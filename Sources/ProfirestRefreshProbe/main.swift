// ProfirestRefreshProbe — a helper for the cross-process tests and the bench, not a product.
//
// One process of several that share one token storage: the file of --file PATH, or with --postgres CONNINFO
// (libpq's connection string; a password better in PGPASSWORD than on the command line) the PostgreSQL table of
// --table NAME (default profirest_tokens), or on Linux with --keychain SERVICE --app-group GROUP --containers DIR
// --keychain-file PATH the keychain storage of Apple platforms (KeychainTokenStorage compiled against the in-memory
// keychain, PlatformShims), its items shared with the other processes through the file PATH and its lock file in the
// group's container under DIR, as an app and its extensions share them — wherever a mode below says --file PATH:
//
//   ProfirestRefreshProbe calls --base URL --file PATH --client ID --calls N
//       makes N concurrent GET /v2/connection and prints {"ok": n, "errors": {"code": n}, "paired": bool, "ms": t}
//   ProfirestRefreshProbe loop --base URL --file PATH --client ID --seconds S
//       GET /v2/connection, two at a time, for S seconds; every half second prints the running totals
//       {"ok": n, "errors": {"code": n}, "max_ms": t, "paired": bool} (make soak kills it at random moments and
//       reads the last complete line)
//   ProfirestRefreshProbe hold-lock --file PATH --seconds S [--key K]
//       takes the storage's lock (for key K, default "probe"), prints {"locked": true}, and sleeps holding it (a test
//       kills it with SIGKILL there)
//   ProfirestRefreshProbe increment --file PATH --key K --times N
//       N times: under the lock of key K, reads the number stored there (none: 0) and stores it plus one; then prints
//       {"done": N} (several processes at once must lose no increment). A failure prints {"error": "…"} and exits 1.
//   ProfirestRefreshProbe outbox --base URL --file PATH --client ID --outbox PATH --prefix P --writes N
//       one of several processes on one outbox file: delivers what the file holds (`run()`) while it hands in N writes
//       a few milliseconds apart, customers and attendance punches in turn, printing a line as each is accepted —
//       `c KEY` (a customer's Idempotency-Key) or `p ID` (a punch's id), also when the server refused it — then
//       waits until nothing waits in the file, and prints {"done": true} (CrossProcessOutboxTests kills it with
//       SIGKILL at a random moment)
//   ProfirestRefreshProbe put --postgres CONNINFO [--table NAME]
//       stores what its standard input holds, one JSON object a line {"key": K, "value": V}, then prints
//       {"stored": n} (make soak seeds the replicas' connections so; the values never appear on a command line)
//   ProfirestRefreshProbe replica --base URL --postgres CONNINFO --client ID --connections N --seconds S --log PATH
//           [--interval I] [--margin M] [--pool P] [--die-after-answer N] [--without-lock]
//       one replica of a partner's backend (make soak's replica trials, SoakReplicas.swift): a client for each of the
//       N connections `profirest-api:<client>:replica-<i>`, all on one PostgresTokenStorage (P connections, 8) and one
//       CurlTransport, each making GET /v2/connection every I seconds (2; at random, 0.5–1.5 I) for S seconds and
//       refreshing its token M seconds (1) before it expires. It appends to the file PATH a line per moment of a
//       token request, written before the library goes on, so that what a SIGKILL cut short can be read afterwards:
//       {"t": ms since 1970, "c": i, "e": EVENT} with EVENT `ask` (a token request goes out for connection i),
//       `answer` (its 200 came back), `stored` (the state document of i was written and committed to PostgreSQL),
//       `invalid_grant` (the server refused the refresh token), `refused` (another status), `no_answer`,
//       `unpaired` (onUnpaired); with --die-after-answer N it ends itself at once (_exit, no cleanup, as a SIGKILL
//       there would) right after its N-th `answer` line, inside the window between the server's answer and the write;
//       with --without-lock (the soak's control) its storage runs the refresh without the lock across processes;
//       a line {"e": "start"} first, the requests' outcomes so far every second
//       {"e": "totals", "ok": n, "errors": {…}, …} and at the end {"e": "end", …} alike.
//   ProfirestRefreshProbe timers [--watchers N] [--reconnects N] [--warmup N]
//       no server and no storage file: N watchers (10000) of an in-memory feed, each cancelled after its one event,
//       then one watcher through N reconnections (5000), after a warm-up; prints one line with the resident memory
//       before and after each (KB), the descriptors and the threads (TimerLifetimeTests; Timers.swift)
//
// It never prints a token: only counts, error codes and times.
#if os(Linux)
import AppleShims
#endif
import Foundation
import ProfirestAPI
import ProfirestPostgres

func emit(_ object: [String: Any]) {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

func argument(_ name: String, _ fallback: String? = nil) -> String {
    let args = CommandLine.arguments
    if let i = args.firstIndex(of: "--" + name), i + 1 < args.count { return args[i + 1] }
    if let fallback { return fallback }
    FileHandle.standardError.write(Data("missing --\(name)\n".utf8))
    exit(2)
}

/// The storage the arguments name: --postgres CONNINFO (and --table), --keychain SERVICE (Linux; see the top of the
/// file), or --file PATH.
func storage() -> any LockingTokenStorage {
    #if os(Linux)
    if CommandLine.arguments.contains("--keychain") { return sharedShimKeychain() }
    #endif
    guard CommandLine.arguments.contains("--postgres") else { return FileTokenStorage(path: argument("file")) }
    do {
        return try PostgresTokenStorage(connectionString: argument("postgres"), table: argument("table", "profirest_tokens"))
    } catch {
        emit(["error": String(describing: error)])
        exit(1)
    }
}

func calls() async {
    let api = ProfirestApi(options: .init(
        baseURL: argument("base"), clientID: argument("client"), language: "en", storage: storage(), timeout: 20))
    let count = Int(argument("calls", "5")) ?? 5
    let start = Date()
    let outcomes = await withTaskGroup(of: String.self) { group in
        for _ in 0..<count {
            group.addTask {
                do {
                    try await api.get("/connection")
                    return "ok"
                } catch let e as ProfirestAPIError {
                    return e.code
                } catch {
                    return String(describing: type(of: error))
                }
            }
        }
        return await group.reduce(into: [String]()) { $0.append($1) }
    }
    var errors: [String: Int] = [:]
    for outcome in outcomes where outcome != "ok" { errors[outcome, default: 0] += 1 }
    emit([
        "ok": outcomes.filter { $0 == "ok" }.count, "errors": errors, "paired": api.isPaired,
        "ms": Int(Date().timeIntervalSince(start) * 1000),
    ])
}

/// Requests in a loop while the soak expires tokens and kills processes around it; the totals as they stand.
func loop() async {
    let api = ProfirestApi(options: .init(
        baseURL: argument("base"), clientID: argument("client"), language: "en", storage: storage(), timeout: 20))
    let end = Date().addingTimeInterval(Double(argument("seconds", "10")) ?? 10)
    let totals = Totals()
    let reporter = Task {
        while !Task.isCancelled {
            try? await Task.sleep(nanoseconds: 500_000_000)
            emit(totals.summary(paired: api.isPaired))
        }
    }
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<2 {
            group.addTask {
                while Date() < end {
                    let start = Date()
                    var outcome = "ok"
                    do {
                        try await api.get("/connection")
                    } catch let e as ProfirestAPIError {
                        outcome = e.code
                    } catch {
                        outcome = String(describing: type(of: error))
                    }
                    totals.add(outcome, ms: Date().timeIntervalSince(start) * 1000)
                }
            }
        }
    }
    reporter.cancel()
    emit(totals.summary(paired: api.isPaired))
}

final class Totals: @unchecked Sendable {
    private let lock = NSLock()
    private var ok = 0
    private var errors: [String: Int] = [:]
    private var maxMs = 0.0

    func add(_ outcome: String, ms: Double) {
        lock.lock()
        defer { lock.unlock() }
        if outcome == "ok" { ok += 1 } else { errors[outcome, default: 0] += 1 }
        maxMs = max(maxMs, ms)
    }

    func summary(paired: Bool) -> [String: Any] {
        lock.lock()
        defer { lock.unlock() }
        return ["ok": ok, "errors": errors, "max_ms": Int(maxMs), "paired": paired]
    }
}

func holdLock() {
    let storage = storage()
    let seconds = Double(argument("seconds", "30")) ?? 30
    do {
        try storage.withLock(argument("key", "probe")) {
            emit(["locked": true])
            Thread.sleep(forTimeInterval: seconds)
        }
    } catch {
        emit(["locked": false, "error": String(describing: type(of: error))])
        exit(1)
    }
}

/// Increments the number under --key, --times times, each under the key's lock (see the top of the file).
func increment() {
    let storage = storage()
    let key = argument("key")
    let times = Int(argument("times", "100")) ?? 100
    do {
        for _ in 0..<times {
            try storage.withLock(key) {
                let current = try storage.get(key).flatMap { Int($0) } ?? 0
                try storage.set(key, String(current + 1))
            }
        }
        emit(["done": times])
    } catch {
        emit(["error": String(describing: error)])
        exit(1)
    }
}

/// One of several processes handing writes to one outbox file and delivering them (see the top of the file).
func outbox() async {
    let api = ProfirestApi(options: .init(
        baseURL: argument("base"), clientID: argument("client"), language: "en",
        storage: FileTokenStorage(path: argument("file")), retryDelay: 0.05, timeout: 10))
    let outbox: Outbox
    do {
        outbox = try api.outbox(path: argument("outbox"))
    } catch {
        emit(["error": String(describing: type(of: error))])
        exit(1)
    }
    let delivering = Task { await outbox.run() }
    let prefix = argument("prefix")
    let pins = ["1234", "3333"]
    var states: [String: Bool] = [:]  // a PIN's person is at work (as far as this process's punches go)
    for i in 0..<(Int(argument("writes", "20")) ?? 20) {
        let line: String
        do {
            if i % 2 == 0 {
                let key = "\(prefix)c-\(i)"
                _ = try await outbox.post("/customers", body: ["name": .string("Process \(key)")], idempotencyKey: key)
                line = "c \(key)"
            } else {
                let pin = pins[(i / 2) % pins.count]
                let working = states[pin] ?? false
                states[pin] = !working
                let punch = AttendancePunchCreate(
                    id: ProfirestApi.uuid(), type: working ? "clock_out" : "clock_in",
                    credential: StaffCredential(method: "pin", secret: pin))
                do {
                    _ = try await outbox.punch(restaurantID: argument("restaurant", "11"), punch)
                } catch let error as ProfirestAPIError where error.code == ErrorCode.attendanceStateConflict {
                    // The other process punched the same person meanwhile: refused, but it reached the server.
                }
                line = "p \(punch.id)"
            }
        } catch {
            emit(["error": String(describing: error)])
            exit(1)
        }
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
        try? await Task.sleep(nanoseconds: UInt64.random(in: 1_000_000...15_000_000))
    }
    // Until nothing waits in the file — the writes of a process killed meanwhile included (flush reads the file).
    while await outbox.flush().count > 0 { try? await Task.sleep(nanoseconds: 20_000_000) }
    delivering.cancel()
    emit(["done": true])
}

#if os(Linux)
/// The keychain storage of --keychain SERVICE --app-group GROUP --containers DIR --keychain-file PATH: the in-memory
/// keychain's items in the file every probe names, the group's containers under DIR.
func sharedShimKeychain() -> any LockingTokenStorage {
    InMemoryKeychain.shared.shareItems(in: argument("keychain-file"))
    AppGroupContainers.shared.root = URL(fileURLWithPath: argument("containers"), isDirectory: true)
    return ShimKeychainStorage(service: argument("keychain"), appGroup: argument("app-group"))
}
#endif

switch CommandLine.arguments.dropFirst().first {
case "calls": await calls()
case "loop": await loop()
case "hold-lock": holdLock()
case "increment": increment()
case "outbox": await outbox()
case "put": put()
case "replica": await replica()
case "timers": await timers()
default:
    FileHandle.standardError.write(Data("usage: ProfirestRefreshProbe calls|loop|hold-lock|increment|outbox|put|replica|timers …\n".utf8))
    exit(2)
}
