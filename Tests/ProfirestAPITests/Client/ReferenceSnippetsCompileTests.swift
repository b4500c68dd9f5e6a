import Foundation
import XCTest
import ProfirestAPI  // not @testable: the snippets must compile against the public API alone
import ProfirestTestSupport

/// Every code shape of the reference's examples, compiled against the public API. The functions are never
/// called: compiling them is the test. `testTheSnippetsRunAgainstAScriptedServer` runs the same shapes.
final class ReferenceSnippetsCompileTests: XCTestCase {
    func testTheSnippetsRunAgainstAScriptedServer() async throws {
        let transport = replayTransport()
        // A paired device: a state document as a previous pairing left it (the token never expires in this test).
        let storage = MemoryTokenStorage()
        try storage.set("profirest-api:profirest-dochazka",
                        #"{"version":1,"access_token":"at_snippets_0123456789","expires_at":"2099-01-01T00:00:00Z"}"#)
        let api = ProfirestApi(options: .init(clientID: "profirest-dochazka", storage: storage,
                                              transport: transport.withoutStreaming, sleep: { _ in }))
        try await requests(api, id: "c1", rid: "11", localID: 1, orderCreate: OrderCreate(quoteId: "q1"),
                           zipData: Data([1]), backupID: "b1")
        XCTAssertGreaterThan(transport.requests.count, 5)
        let before = transport.requests.count
        try await events(api, rid: "11")
        XCTAssertGreaterThan(transport.requests.count, before)
    }

    func clients() {
        let api = ProfirestApi(options: .init(baseURL: "http://127.0.0.1:8080", clientID: "profirest-dochazka", storage: MemoryTokenStorage()))
        let api2 = ProfirestApi(options: .init(clientID: "profirest-kds", storage: MemoryTokenStorage(), onUnpaired: { _ in Task { @MainActor in print("unpaired") } }))
        let api3 = ProfirestApi(options: .init(clientID: "muj-eshop", storage: FileTokenStorage(path: "/tmp/tokens.json")))
        let options: ProfirestApi.Options = .init(
            baseURL: "https://api.mujprofirest.cz", clientID: "x", clientSecret: nil, accessToken: "t", language: nil,
            storage: MemoryTokenStorage(), storageKey: "profirest-api:x", retries: 3, retryDelay: 1, maxRetryWait: 30,
            timeout: 30, refreshMargin: 60, onUnpaired: { _ in }, onStaffExpired: { staff in print(staff.name) },
            transport: URLSessionTransport(), clock: { Date() }, sleep: { _ in })
        let id: String = ProfirestApi.uuid()
        _ = (api, api2, api3, options, id)
    }

    func requests(_ api: ProfirestApi, id: String, rid: String, localID: Int, orderCreate: OrderCreate, zipData: Data,
                  backupID: String) async throws {
        let catalog: Catalog = try await api.get("/restaurants/11/catalog", options: .init(query: ["channel": "pos"]))
        let r = try await api.send("GET", "/customers/\(id)")
        try await api.patch("/customers/\(id)", body: ["name": "Jana Nováková"], options: .init(ifMatch: r.header("ETag")))
        let order: Order = try await api.post("/restaurants/11/orders", body: orderCreate, options: .init(idempotencyKey: .key("order-\(localID)")))
        try await api.post("/restaurants/\(rid)/backups", body: .data(zipData, contentType: "application/zip"))
        let zip: Data = try await api.get("/restaurants/\(rid)/backups/\(backupID)/content", options: .init(accept: "application/zip"))
        let staff: [StaffMember] = try await api.all("/restaurants/11/staff")
        for try await page in api.pages("/restaurants/11/attendance/presence", as: AttendancePresencePage.self) { print(page.data) }
        for p in try await api.all("/restaurants/\(rid)/attendance/presence", as: AttendancePresence.self) { print(p.employee.name) }
        _ = (catalog, order, zip, staff)
    }

    func events(_ api: ProfirestApi, rid: String) async throws {
        let feed = api.watchEvents(.init(
            restaurantID: rid,
            types: ["kitchen.ticket_updated", "order.created", "order.status_changed"],
            onEvents: { _ in await reloadBoard() },   // a thrown error = the page comes again
            onReset: { _ in await reloadBoard() }))
        feed.cancel()
        // one page (e.g. from BGAppRefreshTask):
        try await api.eventWatcher(.init(restaurantID: rid, onEvents: { _ in })).once()
        // the options of the Methods table, with the generated constants' wire values for the types
        let watcher = api.eventWatcher(.init(
            restaurantID: rid, types: [EventType.orderCreated.rawValue, "order.status_changed"], onEvents: { events in print(events.map(\.id)) },
            onReset: { error in print(error.code) }, onError: { error in print(error) }, stream: false,
            streamIdleTimeout: 45, interval: 5, limit: 100))
        let live: Bool = watcher.isStreaming
        watcher.stop()
        await watcher.run()
        _ = live
    }

    func punches(_ api: ProfirestApi, rid: String, pin: String, quote: QuoteCreate, receipt: ReceiptCreate) async throws {
        var body = AttendancePunchCreate(id: ProfirestApi.uuid(), type: "clock_in", credential: StaffCredential(method: "pin", secret: pin))
        body.credential?.employeeId = "emp_2"
        let punch: AttendancePunch = try await api.post("/restaurants/\(rid)/attendance/punches", body: body)
        try await api.post("/restaurants/\(rid)/quotes", body: quote)
        try await api.post("/restaurants/\(rid)/receipts", body: receipt, options: .init(staff: .required))
        _ = punch
    }

    func errors(_ api: ProfirestApi, rid: String, quote: QuoteCreate) async {
        do {
            try await api.post("/restaurants/\(rid)/quotes", body: quote)
        } catch let e as ProfirestAPIError {
            switch e.code {
            case ErrorCode.staffAmbiguous: for (i, c) in e.candidates.enumerated() { print(i, c["name"]?.stringValue ?? "?") }
            case ErrorCode.staffLocked: print(e.retryAfter.map(String.init) ?? "?")
            case ErrorCode.networkError, ErrorCode.timeout: break
            default: print(e.title, e.code)
            }
            if e.code == ErrorCode.validationFailed { for f in e.errors { print("\(f["pointer"]?.stringValue ?? ""): \(f["message"]?.stringValue ?? "")") } }
            print(e.requestID ?? "", e.message, e.detail ?? "", e.status, e.retryable, e.existingID ?? "")
            let problem: JSONValue? = e.problem
            let model: Problem? = e.problemModel
            _ = (problem, model)
        } catch {
            print(error.localizedDescription)
        }
    }
}

/// The app's own function of the reference's event feed example.
private func reloadBoard() async {}

/// Answers every request with the contract's example of the schema the snippet at that path asks for. Without
/// streaming, as the custom transport it stands for: the event feed is read by polling.
private func replayTransport() -> ScriptedTransport {
    let contract = packageRoot.appendingPathComponent("contract/profirest-v2.openapi.json")
    let root = (try? JSONSerialization.jsonObject(with: Data(contentsOf: contract))) as? [String: Any]
    let schemas = ((root?["components"] as? [String: Any])?["schemas"] as? [String: Any]) ?? [:]
    // Each example as JSON, whole and as the last page (without the `next_cursor` it names).
    var bodies: [String: (whole: Data, last: Data)] = [:]
    for (name, schema) in schemas {
        guard var example = (schema as? [String: Any])?["example"] as? [String: Any],
              let whole = try? JSONSerialization.data(withJSONObject: example) else { continue }
        example["next_cursor"] = nil
        bodies[name] = (whole, (try? JSONSerialization.data(withJSONObject: example)) ?? whole)
    }
    let examples = bodies
    return ScriptedTransport { request in
        let path = request.url.path
        if path.hasSuffix("/content") {
            return .respond(APIResponse(status: 200, headers: ["Content-Type": "application/zip"], data: Data([0x50, 0x4B])))
        }
        let schema: String
        if path.hasSuffix("/catalog") { schema = "Catalog" }
        else if path.hasSuffix("/orders") { schema = "Order" }
        else if path.hasSuffix("/staff") { schema = "StaffMemberPage" }
        else if path.hasSuffix("/presence") { schema = "AttendancePresencePage" }
        else if path.hasSuffix("/events") { schema = "EventPage" }
        else { schema = "Customer" }
        // The example page names a next page: serve it once, then end the list.
        let lastPage = request.url.query?.contains("cursor=") == true && schema != "EventPage"
        let body = (lastPage ? examples[schema]?.last : examples[schema]?.whole) ?? Data("{}".utf8)
        return .respond(APIResponse(status: 200, headers: ["Content-Type": "application/json", "ETag": "\"v1\""], data: body))
    }
}

/// The README's Quick start (the GettingStarted article's too), compiled against the public API (never run: it waits
/// for a person to approve).
enum QuickStart {
    static func example() async throws {
        let api = ProfirestApi(options: .init(
            baseURL: "http://127.0.0.1:8080", clientID: "profirest-kds",
            storage: FileTokenStorage(path: "kds-tokens.json")))

        if !api.isPaired {
            let pairing = try await api.pair(scope: "restaurants:read orders:read events:read", deviceName: "Kitchen 1")
            print("Approve code \(pairing.userCode) at \(pairing.verificationURIComplete) (restaurant 11)")
            try await pairing.connected()
        }
        let connection = try await api.connection()
        print("Restaurant", connection.restaurantId ?? "?")

        let feed = api.watchEvents(.init(restaurantID: connection.restaurantId, onEvents: { events in
            for event in events { print(event.type, event.id) }
        }))
        try await Task.sleep(nanoseconds: 60_000_000_000)
        feed.cancel()
    }
}
