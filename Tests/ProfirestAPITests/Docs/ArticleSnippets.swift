// generated — do not edit: tools/article_snippets.py writes it from the ```swift blocks of
// Sources/ProfirestAPI/ProfirestAPI.docc/*.md (`make docs` or `make generate`); `make test` fails when it is stale.
//
// Each block is a method of ArticleSnippetContext (Docs/ArticleSnippetsSupport.swift), or its members when it only
// declares. Compiling them against the public API is the test; only the testing article's examples are also run
// (ArticleSnippetsTests). #sourceLocation makes the compiler report a line of a block at its line in the article.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ProfirestAPI  // not @testable: the articles show the public API only
#if canImport(OSLog)
import OSLog
#endif
#if canImport(SwiftUI)
import SwiftUI
#endif
#if canImport(ProfirestPostgres)
import ProfirestPostgres
#endif
#if canImport(XCTest)
import XCTest
#endif

extension ArticleSnippetContext {
    // MARK: ContractModels.md

    // ContractModels.md, line 14
    func contractModels1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/ContractModels.md", line: 14)
        var punch = AttendancePunchCreate(id: ProfirestApi.uuid(), type: .clockIn,
                                          credential: StaffCredential(method: "pin", secret: pin))
        punch.credential?.employeeId = "emp_2"                  // chosen after staff_ambiguous
        let recorded: AttendancePunch = try await api.post("/restaurants/\(rid)/attendance/punches", body: punch)
        if recorded.state == AttendanceState.working { show("\(recorded.employee.name) is at work") }
#sourceLocation()
    }

    // ContractModels.md, line 38
    func contractModels2() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/ContractModels.md", line: 38)
        let update = CustomerUpdate(email: .null, note: .value("Allergic to nuts"))   // clear the e-mail, set the note
        try await api.patch("/customers/cus_8D2k", body: update)
#sourceLocation()
    }

    // MARK: Diagnostics.md

    // Diagnostics.md, line 13
    func diagnostics1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/Diagnostics.md", line: 13)
        // Linux: a line on standard error
        let api = ProfirestApi(options: .init(clientID: "muj-eshop", observer: { event in
            FileHandle.standardError.write(Data("profirest: \(event)\n".utf8))
        }))
#sourceLocation()
        _ = api
    }

    #if canImport(OSLog)
    // Diagnostics.md, line 23
    func diagnostics2() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/Diagnostics.md", line: 23)
        let logger = Logger(subsystem: "cz.firma.pokladna", category: "profirest")
        let api = ProfirestApi(options: .init(clientID: "profirest-pos", observer: { event in
            logger.debug("\(event.description, privacy: .public)")
        }))
#sourceLocation()
        _ = api
    }
    #endif

    // MARK: DurableWrites.md

    // DurableWrites.md, line 14
    func durableWrites1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/DurableWrites.md", line: 14)
        let outbox = try api.outbox(path: "pichacka-outbox.json", onFailure: { failure in
            print("refused later: \(failure.item.id) \(failure.error.code)")
        })
        let delivering = Task { await outbox.run() }   // delivers what waits, until cancelled

        let punch = AttendancePunchCreate(
            id: ProfirestApi.uuid(), type: "clock_in", credential: StaffCredential(method: "pin", secret: pin))
        switch try await outbox.punch(restaurantID: rid, punch) {
        case .delivered(let answer):
            let recorded = try answer?.decode(as: AttendancePunch.self)
            print("OK", recorded?.employee.name ?? "")
        case .queued:
            print("saved offline, \(outbox.status.count) waiting")
        }
#sourceLocation()
        _ = delivering
    }

    // DurableWrites.md, line 90
    func durableWrites2() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/DurableWrites.md", line: 90)
        let outbox = try api.outbox(path: "pichacka-outbox.json")
        let status = await outbox.flush()
        if let age = status.oldestAge(), age > 60 * 60 {
            show("\(status.count) punches have waited for over an hour (\(status.lastFailure?.code ?? "no answer yet"))")
        }
#sourceLocation()
    }

    // MARK: FollowingTheEventFeed.md

    // FollowingTheEventFeed.md, line 22
    func followingTheEventFeed1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/FollowingTheEventFeed.md", line: 22)
        let feed = api.watchEvents(.init(
            restaurantID: rid,
            types: ["order.created", "order.status_changed", "kitchen.ticket_updated"],
            onEvents: { events in try await board.apply(events) },
            onReset: { _ in await board.reloadAll() }))

        // When the screen goes away:
        feed.cancel()
#sourceLocation()
    }

    // FollowingTheEventFeed.md, line 42
    func followingTheEventFeed2() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/FollowingTheEventFeed.md", line: 42)
        let feed = api.watchEvents(.init(restaurantID: rid, types: ["order.created", "order.status_changed"], onEvents: { events in
            for event in events {
                guard let orderID = event.data["order_id"]?.stringValue else { continue }
                let order = try await api.orders.get(restaurantID: event.restaurantId, orderID: orderID)
                await board.upsert(order)
            }
        }))
#sourceLocation()
        _ = feed
    }

    // FollowingTheEventFeed.md, line 77
    func followingTheEventFeed3() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/FollowingTheEventFeed.md", line: 77)
        let watcher = api.eventWatcher(.init(
            restaurantID: rid,
            onEvents: { events in try await board.apply(events) },
            onError: { error in print("event feed: \(error)") }))
        let reading = Task { await watcher.run() }

        show(watcher.isStreaming ? "Live" : "Catching up")

        // Later, from anywhere:
        watcher.stop()
        await reading.value
#sourceLocation()
    }

    // FollowingTheEventFeed.md, line 94
    func followingTheEventFeed4() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/FollowingTheEventFeed.md", line: 94)
        let watcher = api.eventWatcher(.init(restaurantID: rid, onEvents: { events in try await board.apply(events) }))
        try await watcher.once()
#sourceLocation()
    }

    // FollowingTheEventFeed.md, line 106
    func followingTheEventFeed5() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/FollowingTheEventFeed.md", line: 106)
        for try await batch in api.events(restaurantID: rid, types: ["order.created", "order.status_changed"]) {
            if batch.reset != nil { await board.reloadAll() }   // 410 cursor_expired: events were missed
            try await board.apply(batch.events)
        }
#sourceLocation()
    }

    #if canImport(SwiftUI)
    // FollowingTheEventFeed.md, line 127
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/FollowingTheEventFeed.md", line: 127)
    struct KitchenBoard: View {
        let api: ProfirestApi
        @State private var orderIDs: [String] = []
        @State private var unpaired = false

        var body: some View {
            List(orderIDs, id: \.self) { Text($0) }
                .task {
                    do {
                        for try await batch in api.events(restaurantID: "11", types: ["order.created"]) {
                            if batch.reset != nil { orderIDs = [] }   // reload from the server here
                            orderIDs += batch.events.compactMap { $0.data["order_id"]?.stringValue }
                        }
                    } catch {
                        unpaired = true   // not_paired: show the pairing screen
                    }
                }
        }
    }
#sourceLocation()
    #endif

    #if canImport(SwiftUI)
    // FollowingTheEventFeed.md, line 164
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/FollowingTheEventFeed.md", line: 164)
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    struct KitchenScreen: View {
        let api: ProfirestApi
        @Environment(\.scenePhase) private var scenePhase

        var body: some View {
            KitchenBoard(api: api)
                .onChange(of: scenePhase) { _, phase in
                    if phase == .active { api.wakeEventFeeds() }
                }
        }
    }
#sourceLocation()
    #endif

    // FollowingTheEventFeed.md, line 182
    func followingTheEventFeed8() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/FollowingTheEventFeed.md", line: 182)
        if api.state.feed == .stopped {
            try await api.eventWatcher(.init(restaurantID: rid, onEvents: { events in try await board.apply(events) })).once()
        } else {
            api.wakeEventFeeds()
        }
#sourceLocation()
    }

    // FollowingTheEventFeed.md, line 229
    func followingTheEventFeed9() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/FollowingTheEventFeed.md", line: 229)
        let feed = api.watchEvents(.init(
            restaurantID: rid, onEvents: { events in try await board.apply(events) }, stream: false, interval: 15))
#sourceLocation()
        _ = feed
    }

    // MARK: GettingStarted.md

    // GettingStarted.md, line 43
    func gettingStarted1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/GettingStarted.md", line: 43)
        let api = ProfirestApi(options: .init(
            baseURL: "http://127.0.0.1:8080", clientID: "profirest-kds",
            storage: FileTokenStorage(path: "kds-tokens.json")))               // tokens survive a restart, file 0600

        if !api.isPaired {
            let pairing = try await api.pair(scope: "restaurants:read orders:read events:read", deviceName: "Kitchen 1")
            print("Approve code \(pairing.userCode) at \(pairing.verificationURIComplete) (restaurant 11)")
            try await pairing.connected()                                         // polls until the manager approves
        }
        let connection = try await api.connection()                              // a first typed call
        print("Restaurant", connection.restaurantId ?? "?")

        let feed = api.watchEvents(.init(restaurantID: connection.restaurantId, onEvents: { events in
            for event in events { print(event.type, event.id) }                  // at least once, in order
        }))
        try await Task.sleep(nanoseconds: 60_000_000_000)
        feed.cancel()
#sourceLocation()
    }

    // MARK: PairingADevice.md

    // PairingADevice.md, line 23
    func pairingADevice1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/PairingADevice.md", line: 23)
        let api = ProfirestApi(options: .init(
            clientID: "profirest-kds",
            storage: FileTokenStorage(path: "kds-tokens.json")))

        if !api.isPaired {
            let pairing = try await api.pair(
                scope: "restaurants:read orders:read kitchen:read kitchen:write events:read",
                deviceName: "Kitchen 1", appVersion: "2.3.0")
            show("Ask a manager to enter \(pairing.userCode) at \(pairing.verificationURI)")
            try await pairing.connected()
        }
        show("Paired with restaurant \(api.restaurantID ?? "?")")
#sourceLocation()
    }

    // PairingADevice.md, line 59
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/PairingADevice.md", line: 59)
    func pairOrExplain(_ pairing: Pairing) async -> String {
        do {
            try await pairing.connected()
            return "Paired."
        } catch let refusal as ProfirestOAuthError where refusal.error == "access_denied" {
            return "The manager refused this device."
        } catch let refusal as ProfirestOAuthError where refusal.error == "expired_token" {
            return "Nobody entered the code in time. Start again for a new code."
        } catch is CancellationError {
            return "Pairing stopped."
        } catch {
            return "Pairing failed: \(error.localizedDescription)"
        }
    }
#sourceLocation()

    // PairingADevice.md, line 80
    func pairingADevice3() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/PairingADevice.md", line: 80)
        let pairing = try await api.pair(scope: "kitchen:read", deviceName: "Kitchen 1")
        let waiting = Task { try await pairing.connected() }

        // The person taps Cancel:
        pairing.cancel()
        do {
            try await waiting.value
        } catch is CancellationError {
            show("Not paired.")
        }
#sourceLocation()
    }

    // PairingADevice.md, line 96
    func pairingADevice4() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/PairingADevice.md", line: 96)
        let pairing = try await api.pair(scope: "kitchen:read", deviceName: "Kitchen 1")
        var paired = false
        while !paired {
            try await Task.sleep(nanoseconds: 1_000_000_000)
            paired = try await pairing.poll()
        }
#sourceLocation()
    }

    // PairingADevice.md, line 111
    func pairingADevice5() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/PairingADevice.md", line: 111)
        let pairing = try await api.pair(scope: "kitchen:read", deviceName: "Kitchen 1")
        // Before the app may be suspended:
        UserDefaults.standard.set(try JSONEncoder().encode(pairing.state), forKey: "profirest.pairing")

        // After a relaunch, while the code is still valid:
        if let saved = UserDefaults.standard.data(forKey: "profirest.pairing") {
            UserDefaults.standard.removeObject(forKey: "profirest.pairing")
            let state = try JSONDecoder().decode(PairingState.self, from: saved)
            if state.expiresAt > Date() {
                try await api.resumePairing(state).connected()
            }
        }
#sourceLocation()
    }

    // PairingADevice.md, line 135
    func pairingADevice6() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/PairingADevice.md", line: 135)
        if api.restaurantID == nil {
            try await api.connection()
        }
#sourceLocation()
    }

    // PairingADevice.md, line 149
    func pairingADevice7() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/PairingADevice.md", line: 149)
        let api = ProfirestApi(options: .init(
            clientID: "profirest-kds",
            storage: FileTokenStorage(path: "kds-tokens.json"),
            onUnpaired: { _ in Task { @MainActor in showPairingScreen() } }))

        // The app's own "Forget this device" button:
        await api.unpair()
#sourceLocation()
    }

    // PairingADevice.md, line 169
    func pairingADevice8() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/PairingADevice.md", line: 169)
        for await state in api.stateChanges {
            if !state.isPaired { showPairingScreen(); break }
            show(state.staff.map { "\($0.name) is signed in" } ?? "Nobody is signed in")
        }
#sourceLocation()
    }

    #if canImport(SwiftUI)
    // PairingADevice.md, line 181
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/PairingADevice.md", line: 181)
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    struct RegisterRoot: View {
        @State private var model: ProfirestStateModel

        init(api: ProfirestApi) {
            _model = State(initialValue: ProfirestStateModel(api: api))
        }

        var body: some View {
            VStack {
                if !model.isPaired {
                    Text("Pair this register")
                } else {
                    Text(model.staff?.name ?? "Nobody is signed in")
                    if let waiting = model.outbox?.count, waiting > 0 { Text("\(waiting) punches waiting to be sent") }
                    Text(model.feed == .live ? "Live" : "Catching up")
                }
            }
        }
    }
#sourceLocation()
    #endif

    // MARK: PartnerConsent.md

    // PartnerConsent.md, line 28
    func partnerConsent1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/PartnerConsent.md", line: 28)
        let api = ProfirestApi(options: .init(
            clientID: "moje-aplikace",
            storage: FileTokenStorage(path: "profirest-connection.json")))

        let url = try api.authorizationURL(redirectURI: "mojeaplikace://profirest", scope: "restaurants:read orders:read")
        let callback = try await openInBrowser(url, callbackScheme: "mojeaplikace")
        let connection = try await api.completeAuthorization(callback)
        show("Connected to \(connection.restaurants.map(\.name).joined(separator: ", "))")
#sourceLocation()
        _ = connection
    }

    // PartnerConsent.md, line 49
    func partnerConsent2() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/PartnerConsent.md", line: 49)
        let transport = URLSessionTransport()   // one connection pool for every account
        let tokens = FileTokenStorage(path: "/var/lib/eshop/profirest.json")
        let secret = ProcessInfo.processInfo.environment["PROFIREST_CLIENT_SECRET"]

        func profirest(for accountID: String) -> ProfirestApi {
            ProfirestApi(options: .init(
                clientID: "muj-eshop", clientSecret: secret, storage: tokens,
                storageKey: "profirest-api:muj-eshop:account-\(accountID)", transport: transport))
        }

        // GET /profirest/connect — the owner clicked "Connect Profirest"; redirect them to this address.
        func connectAddress(accountID: String) throws -> URL {
            try profirest(for: accountID).authorizationURL(
                redirectURI: "https://eshop.example.cz/profirest/callback", scope: "restaurants:read orders:read orders:write")
        }

        // GET /profirest/callback?code=…&state=…&iss=… — possibly in another process of the service.
        func finishConnecting(accountID: String, query: [String: String]) async throws -> Connection {
            try await profirest(for: accountID).completeAuthorization(parameters: query)
        }
#sourceLocation()
    }

    // PartnerConsent.md, line 83
    func partnerConsent3() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/PartnerConsent.md", line: 83)
        let url = try api.authorizationURL(
            redirectURI: "mojeaplikace://profirest", scope: "restaurants:read orders:read", prompt: "consent")
        let callback = try await openInBrowser(url, callbackScheme: "mojeaplikace")
        try await api.completeAuthorization(callback)
#sourceLocation()
    }

    // PartnerConsent.md, line 96
    func partnerConsent4() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/PartnerConsent.md", line: 96)
        do {
            try await api.completeAuthorization(callbackURL)
        } catch let refusal as ProfirestOAuthError {
            switch refusal.error {
            case "access_denied": show("The owner did not allow the connection.")
            case "invalid_state": show("This link is old or not ours. Please connect again. (\(refusal.message))")
            default: show("Profirest refused the connection: \(refusal.message)")
            }
        }
#sourceLocation()
    }

    // PartnerConsent.md, line 120
    func partnerConsent5() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/PartnerConsent.md", line: 120)
        do {
            try await api.disconnect()
            show("Disconnected.")
        } catch {
            show("Disconnected here. Profirest could not be told yet and will be told later. (\(error))")
        }
#sourceLocation()
    }

    // MARK: ProfirestAPI.md

    // ProfirestAPI.md, line 37
    func profirestAPI1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/ProfirestAPI.md", line: 37)
        let api = ProfirestApi(options: .init(clientID: "profirest-dochazka", storage: FileTokenStorage(path: "tokens.json")))
        let staff: [StaffMember] = try await api.all("/restaurants/11/staff")
#sourceLocation()
        _ = staff
    }

    // MARK: ReadingLists.md

    // ReadingLists.md, line 18
    func readingLists1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/ReadingLists.md", line: 18)
        let staff: [StaffMember] = try await api.all("/restaurants/\(rid)/staff")
        show(staff.filter(\.active).map(\.name).joined(separator: ", "))
#sourceLocation()
    }

    // ReadingLists.md, line 30
    func readingLists2() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/ReadingLists.md", line: 30)
        var late: [Order] = []
        for try await page in api.pages("/restaurants/\(rid)/orders", as: OrderPage.self,
                                        options: .init(query: ["status": ["new", "accepted"], "limit": 50])) {
            late += page.data.filter { $0.createdAt < Date().addingTimeInterval(-30 * 60) }
            if late.count >= 10 { break }
        }
        show("\(late.count) orders waiting for more than half an hour")
#sourceLocation()
    }

    // ReadingLists.md, line 48
    func readingLists3() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/ReadingLists.md", line: 48)
        var cursor: String? = savedCursor
        repeat {
            let page = try await api.customers.list(cursor: cursor, limit: 100)
            try export(page.data)
            cursor = page.nextCursor
            if let cursor { saveCursor(cursor) }
        } while cursor != nil
#sourceLocation()
    }

    // MARK: RequestsAndErrors.md

    // RequestsAndErrors.md, line 27
    func requestsAndErrors1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/RequestsAndErrors.md", line: 27)
        let catalog: Catalog = try await api.get("/restaurants/\(rid)/catalog", options: .init(query: ["channel": "pos"]))
        let order = try await api.get("/restaurants/\(rid)/orders/ord_9Kx2", as: Order.self)
        let sameOrder = try await api.orders.get(restaurantID: rid, orderID: "ord_9Kx2")
        show("\(catalog.products.count) products; order \(order.status), \(sameOrder.status)")
#sourceLocation()
        _ = (catalog, order, sameOrder)
    }

    // RequestsAndErrors.md, line 53
    func requestsAndErrors2() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/RequestsAndErrors.md", line: 53)
        let quote = try await api.orders.createQuote(restaurantID: rid, quoteRequest)
        let order: Order = try await api.post("/restaurants/\(rid)/orders", body: OrderCreate(quoteId: quote.id))
        try await api.post("/restaurants/\(rid)/tabs", body: ["name": "Table 4"])
        try await api.post("/restaurants/\(rid)/backups", body: .data(backupArchive, contentType: "application/zip"))
        show("Order \(order.id) is \(order.status)")
#sourceLocation()
        _ = order
    }

    // RequestsAndErrors.md, line 73
    func requestsAndErrors3() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/RequestsAndErrors.md", line: 73)
        let key = "order-\(localOrderID)"       // saved with the local record before the first attempt
        let order: Order = try await api.post(
            "/restaurants/\(rid)/orders", body: OrderCreate(quoteId: quoteID), options: .init(idempotencyKey: .key(key)))
        show("Order \(order.id)")
#sourceLocation()
        _ = order
    }

    // RequestsAndErrors.md, line 90
    func requestsAndErrors4() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/RequestsAndErrors.md", line: 90)
        let response = try await api.send("GET", "/customers/cus_8D2k")
        let customer: Customer = try response.decode()
        do {
            try await api.patch("/customers/\(customer.id)", body: CustomerUpdate(note: "Allergic to nuts"),
                                options: .init(ifMatch: response.header("ETag")))
        } catch let error as ProfirestAPIError where error.code == ErrorCode.preconditionFailed {
            show("Somebody else changed \(customer.name) first; load it again and repeat the change.")
        }
#sourceLocation()
        _ = customer
    }

    // RequestsAndErrors.md, line 103
    func requestsAndErrors5() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/RequestsAndErrors.md", line: 103)
        if let archive = try await api.getData("/restaurants/\(rid)/backups/bkp_1/content", options: .init(accept: "application/zip")) {
            try archive.write(to: URL(fileURLWithPath: "backup.zip"))
        }
#sourceLocation()
    }

    // RequestsAndErrors.md, line 116
    func requestsAndErrors6() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/RequestsAndErrors.md", line: 116)
        // A price check at the till answers now or not at all: no retries, 5 s for the attempt.
        let priced = try await api.orders.createQuote(restaurantID: rid, quoteRequest, options: .init(retries: 0, timeout: 5))
        show("Total \(priced.total.amount)")
#sourceLocation()
        _ = priced
    }

    // RequestsAndErrors.md, line 160
    func requestsAndErrors7() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/RequestsAndErrors.md", line: 160)
        do {
            try await api.post("/restaurants/\(rid)/receipts", body: receipt, options: .init(staff: .required))
        } catch let error as ProfirestAPIError {
            switch error.code {
            case ErrorCode.validationFailed:
                for field in error.errors {
                    show("\(field["pointer"]?.stringValue ?? "?"): \(field["message"]?.stringValue ?? "")")
                }
            case ErrorCode.staffSessionRequired, ErrorCode.staffSessionExpired:
                show("Please sign in first.")
            case ErrorCode.networkError, ErrorCode.timeout:
                show("No connection. The receipt may or may not have been recorded.")
            default:
                show("\(error.title) (request \(error.requestID ?? "-"))")
            }
        }
#sourceLocation()
    }

    // MARK: ServingManyRestaurants.md

    // ServingManyRestaurants.md, line 25
    func servingManyRestaurants1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/ServingManyRestaurants.md", line: 25)
        let storage = MemoryTokenStorage()   // or FileTokenStorage, or PostgreSQL (below): one for every connection

        func profirest(for restaurant: String) -> ProfirestApi {
            ProfirestApi(options: .init(
                clientID: "muj-eshop", storage: storage,
                storageKey: "profirest-api:muj-eshop:restaurant-\(restaurant)"))   // no transport: the shared one
        }
#sourceLocation()
    }

    // ServingManyRestaurants.md, line 45
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/ServingManyRestaurants.md", line: 45)
    func follow(_ restaurants: [String], in storage: any TokenStorage) async throws -> [Task<Void, Never>] {
        var feeds: [Task<Void, Never>] = []
        for start in stride(from: 0, to: restaurants.count, by: 100) {
            var wave: [EventWatcher] = []
            for restaurant in restaurants[start..<min(start + 100, restaurants.count)] {
                let api = ProfirestApi(options: .init(
                    clientID: "muj-eshop", storage: storage,
                    storageKey: "profirest-api:muj-eshop:restaurant-\(restaurant)",
                    onUnpaired: { error in disconnected(restaurant, error) }))   // once per lost connection
                let watcher = api.eventWatcher(.init(
                    restaurantID: restaurant,
                    onEvents: { events in try await handle(restaurant, events) },
                    onReset: { _ in await reload(restaurant) }))
                wave.append(watcher)
                feeds.append(Task { await watcher.run() })
            }
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, wave.contains(where: { !$0.isStreaming }) {
                try await Task.sleep(nanoseconds: 50_000_000)
            }
        }
        return feeds
    }
#sourceLocation()

    #if canImport(ProfirestPostgres)
    // ServingManyRestaurants.md, line 92
    func servingManyRestaurants3() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/ServingManyRestaurants.md", line: 92)
        let tokens = try PostgresTokenStorage(
            connectionString: "host=db.internal dbname=eshop user=eshop", table: "profirest_tokens")
        let feeds = try await follow(["13", "14", "15"], in: tokens)
#sourceLocation()
        _ = feeds
    }
    #endif

    // MARK: SigningInStaff.md

    // SigningInStaff.md, line 20
    func signingInStaff1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/SigningInStaff.md", line: 20)
        var credential = StaffCredential(method: "pin", secret: pin)
        do {
            try await api.signInStaff(restaurantID: rid, credential: credential)
        } catch let error as ProfirestAPIError where error.code == ErrorCode.staffAmbiguous {
            // Two people share this PIN: let the person pick their name, then sign in again with it.
            let names = error.candidates.map { $0["name"]?.stringValue ?? "?" }
            let chosen = try await choose(among: names)
            credential.employeeId = error.candidates[chosen]["id"]?.stringValue
            try await api.signInStaff(restaurantID: rid, credential: credential)
        }
        show("Hello, \(api.staff?.name ?? "?")")
#sourceLocation()
    }

    // SigningInStaff.md, line 43
    func signingInStaff2() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/SigningInStaff.md", line: 43)
        do {
            try await api.signInStaff(restaurantID: rid, credential: StaffCredential(method: "card", secret: cardNumber))
        } catch let error as ProfirestAPIError where error.code == ErrorCode.staffLocked {
            show("Too many attempts. Try again in \(error.retryAfter ?? 300) s.")
        } catch let error as ProfirestAPIError where error.code == ErrorCode.staffCredentialsInvalid {
            show("Unknown card.")
        }
#sourceLocation()
    }

    // SigningInStaff.md, line 63
    func signingInStaff3() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/SigningInStaff.md", line: 63)
        try await api.post("/restaurants/\(rid)/receipts", body: receipt, options: .init(staff: .required))

        let presence = try await api.attendance.listPresence(restaurantID: rid, options: .init(staff: .none))
        show("\(presence.data.count) at work")
#sourceLocation()
        _ = presence
    }

    // SigningInStaff.md, line 81
    func signingInStaff4() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/SigningInStaff.md", line: 81)
        let api = ProfirestApi(options: .init(
            clientID: "profirest-pos",
            storage: FileTokenStorage(path: "pos-tokens.json"),
            onStaffExpired: { staff in Task { @MainActor in lockScreen(saying: "\(staff.name) was signed out.") } }))

        // The person taps "Sign out":
        await api.signOutStaff()
#sourceLocation()
    }

    // MARK: TestingAgainstTheSandbox.md

    #if canImport(XCTest)
    // TestingAgainstTheSandbox.md, line 44
    func testingAgainstTheSandbox1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/TestingAgainstTheSandbox.md", line: 44)
        let sandbox = "http://127.0.0.1:8080"
        let api = ProfirestApi(options: .init(baseURL: sandbox, clientID: "profirest-dochazka"))

        let pairing = try await api.pair(scope: "restaurants:read staff:read attendance:read", deviceName: "CI")
        var approval = URLRequest(url: URL(string: "\(sandbox)/_sandbox/pairings/\(pairing.userCode)/approve")!)
        approval.httpMethod = "POST"
        approval.httpBody = Data(#"{"restaurant_id": "11"}"#.utf8)
        _ = try await URLSession.shared.data(for: approval)
        try await pairing.connected()

        let staff: [StaffMember] = try await api.all("/restaurants/11/staff")
        XCTAssertTrue(staff.contains { $0.name == "Jana Nováková" })
#sourceLocation()
    }
    #endif

    // TestingAgainstTheSandbox.md, line 91
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/TestingAgainstTheSandbox.md", line: 91)
    /// Answers each request with the next response of a list, and keeps the requests.
    actor ListedServer: HTTPTransport {
        private var answers: [APIResponse]
        private(set) var requests: [HTTPRequest] = []

        init(_ answers: [APIResponse]) { self.answers = answers }

        func send(_ request: HTTPRequest) async throws -> APIResponse {
            requests.append(request)
            return answers.isEmpty ? APIResponse(status: 500) : answers.removeFirst()
        }
    }

    /// The waits a client asked for, recorded instead of waited.
    actor RecordedWaits {
        private(set) var seconds: [TimeInterval] = []

        func wait(_ interval: TimeInterval) { seconds.append(interval) }
    }

    /// The ids of the events a watcher delivered.
    actor RecordedEvents {
        private(set) var ids: [String] = []

        func add(_ events: [Event]) { ids += events.map(\.id) }
    }
#sourceLocation()

    #if canImport(XCTest)
    // TestingAgainstTheSandbox.md, line 125
    func testingAgainstTheSandbox3() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/TestingAgainstTheSandbox.md", line: 125)
        let server = ListedServer([
            APIResponse(status: 503, headers: ["Retry-After": "7"]),
            APIResponse(status: 201, headers: ["Content-Type": "application/json"], data: Data(#"{"id": "tab_1"}"#.utf8)),
        ])
        let waits = RecordedWaits()
        let api = ProfirestApi(options: .init(
            accessToken: "test-token", transport: server, sleep: { seconds in await waits.wait(seconds) }))

        let tab = try await api.post("/restaurants/11/tabs", body: ["name": "Table 4"])

        XCTAssertEqual(tab?["id"]?.stringValue, "tab_1")
        let waited = await waits.seconds
        XCTAssertEqual(waited, [7])                      // the server's Retry-After, not a second of real time
        let requests = await server.requests
        XCTAssertEqual(requests.count, 2)
        XCTAssertEqual(requests[0].header("Idempotency-Key"), requests[1].header("Idempotency-Key"))
#sourceLocation()
    }
    #endif

    #if canImport(XCTest)
    // TestingAgainstTheSandbox.md, line 149
    func testingAgainstTheSandbox4() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/TestingAgainstTheSandbox.md", line: 149)
        let json = ["Content-Type": "application/json"]
        let server = ListedServer([
            APIResponse(status: 200, headers: json, data: Data(#"{"data": [], "next_cursor": "c1", "has_more": false}"#.utf8)),
            APIResponse(status: 200, headers: json, data: Data(#"""
                {"data": [{"id": "evt_1", "type": "order.created", "restaurant_id": "11",
                           "occurred_at": "2026-11-29T12:01:00Z", "data": {"order_id": "ord_1"}}],
                 "next_cursor": "c2", "has_more": false}
                """#.utf8)),
        ])
        let api = ProfirestApi(options: .init(accessToken: "test-token", transport: server))
        let seen = RecordedEvents()
        let watcher = api.eventWatcher(.init(restaurantID: "11", onEvents: { events in await seen.add(events) }))

        try await watcher.once()
        try await watcher.once()

        let ids = await seen.ids
        XCTAssertEqual(ids, ["evt_1"])
        let second = await server.requests[1]
        XCTAssertTrue(second.url.query?.contains("cursor=c1") == true)
#sourceLocation()
    }
    #endif

    // MARK: TokensAndStorage.md

    // TokensAndStorage.md, line 27
    func tokensAndStorage1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/TokensAndStorage.md", line: 27)
        // A service on Linux: one file, shared by all its processes.
        let terminal = ProfirestApi(options: .init(
            clientID: "profirest-dochazka",
            storage: FileTokenStorage(path: "/var/lib/pichacka/tokens.json")))
#sourceLocation()
        _ = terminal
    }

    #if canImport(Security)
    // TokensAndStorage.md, line 34
    func tokensAndStorage2() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/TokensAndStorage.md", line: 34)
        // An app on an Apple platform: the keychain, readable after the device's first unlock, never synced to other devices.
        let register = ProfirestApi(options: .init(
            clientID: "profirest-pos",
            storage: KeychainTokenStorage(service: "cz.example.pokladna")))
#sourceLocation()
        _ = register
    }
    #endif

    // TokensAndStorage.md, line 45
    func tokensAndStorage3() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/TokensAndStorage.md", line: 45)
        do {
            try await api.connection()
        } catch let error as StorageError where error.kind == .corrupt {
            show("The token file \(error.path) is damaged: \(error.reason)")
        }
#sourceLocation()
    }

    #if canImport(Security)
    // TokensAndStorage.md, line 89
    func tokensAndStorage4() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/TokensAndStorage.md", line: 89)
        // The app, its widget and its intents: one item (the access group) and one lock (the app group's container).
        let storage = KeychainTokenStorage(
            service: "cz.example.pokladna", accessGroup: "TEAMID.cz.example.shared", appGroup: "group.cz.example.pokladna")
        let register = ProfirestApi(options: .init(clientID: "profirest-pos", storage: storage))
#sourceLocation()
        _ = register
    }
    #endif

    // TokensAndStorage.md, line 123
    func tokensAndStorage5() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/TokensAndStorage.md", line: 123)
        let storage = FileTokenStorage(path: "/var/lib/eshop/profirest.json")
        let brno = ProfirestApi(options: .init(
            clientID: "muj-eshop", storage: storage, storageKey: "profirest-api:muj-eshop:brno"))
        let olomouc = ProfirestApi(options: .init(
            clientID: "muj-eshop", storage: storage, storageKey: "profirest-api:muj-eshop:olomouc"))
#sourceLocation()
        _ = (brno, olomouc)
    }

    // TokensAndStorage.md, line 171
    func tokensAndStorage6() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/TokensAndStorage.md", line: 171)
        let reporting = ProfirestApi(options: .init(
            accessToken: ProcessInfo.processInfo.environment["PROFIREST_ACCESS_TOKEN"]))
#sourceLocation()
        _ = reporting
    }

    // TokensAndStorage.md, line 216
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/TokensAndStorage.md", line: 216)
    struct DatabaseTokenStorage: TokenStorage {
        let database: AppDatabase

        func get(_ key: String) throws -> String? { try database.value(for: key) }
        func set(_ key: String, _ value: String) throws { try database.setValue(value, for: key) }
        func remove(_ key: String) throws { try database.removeValue(for: key) }
    }
#sourceLocation()

    // MARK: TransportsAndProxies.md

    // TransportsAndProxies.md, line 62
    func transportsAndProxies1() async throws {
#sourceLocation(file: "Sources/ProfirestAPI/ProfirestAPI.docc/TransportsAndProxies.md", line: 62)
        let api = ProfirestApi(options: .init(
            baseURL: "https://profirest.intranet.example", clientID: "profirest-pos",
            trustedCertificates: .pemFile("/etc/profirest/ca.pem")))   // or .pem(bytes)
#sourceLocation()
        _ = api
    }
}
