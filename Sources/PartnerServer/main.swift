// PartnerServer — a partner's backend (an e-shop platform, a delivery service) serving many restaurants from one
// process: a connection per restaurant, every connection's tokens in one storage under a key of its own, one
// transport for all (the default one, shared by the process), a feed per restaurant and a callback per event. The
// pattern of the article "Serving many restaurants"; not a product of the package.
//
//   swift run PartnerServer --sandbox-consents 50            # against `make sandbox`: 50 owners consent, then serve
//   swift run PartnerServer --base https://api.mujprofirest.cz --client-id muj-eshop \
//       --storage /var/lib/eshop/tokens.json --restaurants /var/lib/eshop/restaurants.txt
//   … --postgres "host=db.internal dbname=eshop user=eshop"  # the tokens in PostgreSQL, shared by every replica
//
// A connection whose owner revoked the consent (401 → refresh → invalid_grant → not_paired) stops its feed and is
// reported once; a restaurant whose feed fails (an outage, an expired cursor, an expired token) waits it out on its
// own — the others never notice. --seconds N stops after N seconds (otherwise it runs until killed); --quiet prints
// a summary every 10 seconds instead of a line per event.
import Foundation
import ProfirestAPI
import ProfirestPostgres
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Writes a line of the server's log at once (also into a pipe, where `print` would hold it back in a buffer).
func log(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The command line.
struct Settings {
    var base = "http://127.0.0.1:8080"
    var clientID = "moje-aplikace"
    var storagePath = "partner-tokens.json"
    var postgres: String?
    var restaurantsFile = "partner-restaurants.txt"
    var sandboxConsents = 0
    var seconds: Double?
    var quiet = false

    init(_ arguments: [String]) {
        var i = 1
        while i < arguments.count {
            let value = i + 1 < arguments.count ? arguments[i + 1] : ""
            switch arguments[i] {
            case "--base": base = value
            case "--client-id": clientID = value
            case "--storage": storagePath = value
            case "--postgres": postgres = value
            case "--restaurants": restaurantsFile = value
            case "--sandbox-consents": sandboxConsents = Int(value) ?? 0
            case "--seconds": seconds = Double(value)
            case "--quiet": quiet = true; i -= 1
            default: break
            }
            i += 2
        }
    }
}

/// What the server saw, for its log: events per restaurant, and the connections it lost (each reported once).
final class Tally: @unchecked Sendable {
    // @unchecked: every stored property is guarded by `lock`.
    private let lock = NSLock()
    private var events = 0
    private var lost: Set<String> = []

    func count(_ n: Int) { lock.lock(); events += n; lock.unlock() }

    /// True the first time `restaurant` is reported lost.
    func lose(_ restaurant: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return lost.insert(restaurant).inserted
    }

    var summary: (events: Int, lost: Int) { lock.lock(); defer { lock.unlock() }; return (events, lost.count) }
}

/// Serves restaurants: a client per connection on the shared storage, and its event feed.
final class PartnerServer: Sendable {
    let base: String
    let clientID: String
    let storage: any TokenStorage
    let tally = Tally()
    let quiet: Bool

    init(base: String, clientID: String, storage: any TokenStorage, quiet: Bool) {
        self.base = base
        self.clientID = clientID
        self.storage = storage
        self.quiet = quiet
    }

    /// The storage key of a restaurant's connection: one document per connection, all in one storage.
    func key(_ restaurant: String) -> String { "profirest-api:\(clientID):restaurant-\(restaurant)" }

    /// Follows `restaurant`'s feed until its connection is lost; returns its reader and the task that runs it.
    func serve(_ restaurant: String) -> (watcher: EventWatcher, task: Task<Void, Never>) {
        let tally = self.tally
        let quiet = self.quiet
        // No `transport`: every client gets the process's shared one (on Linux one libcurl multi handle and one thread).
        let api = ProfirestApi(options: .init(
            baseURL: base, clientID: clientID, storage: storage, storageKey: key(restaurant),
            onUnpaired: { error in
                // The owner revoked the consent (or the server forgot the connection): once per connection.
                if tally.lose(restaurant) { log("restaurant \(restaurant): disconnected (\(error.code)); its feed stopped") }
            }))
        let watcher = api.eventWatcher(.init(
            restaurantID: restaurant,
            onEvents: { events in
                tally.count(events.count)
                if !quiet { for event in events { log("restaurant \(restaurant): \(event.type) \(event.id)") } }
            },
            onReset: { _ in log("restaurant \(restaurant): the feed was reset; reload its state") },
            onError: { error in
                // Waited out by the watcher (Retry-After, or 1 s doubling up to 60 s): this restaurant alone.
                if !quiet { log("restaurant \(restaurant): \((error as? ProfirestAPIError)?.code ?? "\(error)")") }
            }))
        return (watcher, Task { await watcher.run() })
    }
}

/// The sandbox's admin API did not make the consents.
struct SandboxRefused: Error, CustomStringConvertible {
    let answer: String
    var description: String { "the sandbox did not make the consents: \(answer)" }
}

/// Makes `count` partner consents on the sandbox's admin API and stores each connection's tokens the way a finished
/// consent (`completeAuthorization`) leaves them, as the state document; returns their restaurants.
func consentOnSandbox(count: Int, server: PartnerServer) async throws -> [String] {
    var request = URLRequest(url: URL(string: server.base + "/_sandbox/consents/bulk")!)
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.httpBody = try JSONSerialization.data(withJSONObject: [
        "count": count, "client_id": server.clientID, "scope": "restaurants:read events:read",
    ])
    let (data, _) = try await URLSession.shared.data(for: request)
    guard let rows = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["data"] as? [[String: Any]] else {
        throw SandboxRefused(answer: String(decoding: data, as: UTF8.self))
    }
    var restaurants: [String] = []
    for row in rows {
        guard let restaurant = row["restaurant_id"] as? String else { continue }
        let document: [String: Any] = [
            "version": 1, "access_token": row["access_token"] ?? "", "refresh_token": row["refresh_token"] ?? "",
            "token_type": "Bearer", "scopes": ((row["scope"] as? String) ?? "").split(separator: " ").map(String.init),
            "expires_at": ISO8601DateFormatter().string(from: Date().addingTimeInterval(row["expires_in"] as? Double ?? 1800)),
        ]
        let text = String(decoding: try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys]), as: UTF8.self)
        try server.storage.set(server.key(restaurant), text)
        restaurants.append(restaurant)
    }
    return restaurants
}

let settings = Settings(CommandLine.arguments)
let storage: any TokenStorage = try settings.postgres.map { try PostgresTokenStorage(connectionString: $0) }
    ?? FileTokenStorage(path: settings.storagePath)
let server = PartnerServer(base: settings.base, clientID: settings.clientID, storage: storage, quiet: settings.quiet)

// The restaurants: your own database knows which accounts connected; here a file, one restaurant id a line.
var restaurants = ((try? String(contentsOfFile: settings.restaurantsFile, encoding: .utf8)) ?? "")
    .split(whereSeparator: \.isNewline).map(String.init)
if settings.sandboxConsents > 0 {
    restaurants += try await consentOnSandbox(count: settings.sandboxConsents, server: server)
    try restaurants.joined(separator: "\n").write(toFile: settings.restaurantsFile, atomically: true, encoding: .utf8)
}
guard !restaurants.isEmpty else {
    log("No restaurants: list them in \(settings.restaurantsFile), or try --sandbox-consents 50 against make sandbox")
    exit(1)
}
log("Serving \(restaurants.count) restaurants from \(settings.base)")
// In waves of 100, each streaming (or given 30 s) before the next starts: a thousand requests at once would only queue
// at the server, and their frames would stay in this process's heap (about 8 KB a connection, BENCHMARKS.md).
var feeds: [Task<Void, Never>] = []
for start in stride(from: 0, to: restaurants.count, by: 100) {
    let wave = restaurants[start..<min(start + 100, restaurants.count)].map { server.serve($0) }
    feeds += wave.map(\.task)
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline, wave.contains(where: { !$0.watcher.isStreaming }) {
        try await Task.sleep(nanoseconds: 50_000_000)
    }
}

let started = Date()
while settings.seconds.map({ Date().timeIntervalSince(started) < $0 }) ?? true {
    let left = settings.seconds.map { $0 - Date().timeIntervalSince(started) } ?? 10
    try await Task.sleep(nanoseconds: UInt64(max(0.1, min(10, left)) * 1e9))
    let (events, lost) = server.tally.summary
    log("\(Int(Date().timeIntervalSince(started))) s: \(events) events, \(restaurants.count - lost) of \(restaurants.count) restaurants connected")
}
for feed in feeds { feed.cancel() }
