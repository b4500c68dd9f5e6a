// Pichacka — an attendance terminal on the command line, the example client of ProfirestAPI.
//
//   swift run Pichacka            (or `make demo`, which starts the local sandbox first)
//
// On its first run it pairs this computer as a device: it prints a code that a manager confirms in the
// administration (PC / devices → Connect a device) and keeps the tokens in a file (`q` while the code is shown ends the
// terminal at once, the pairing abandoned). Then it reads commands:
//
//   p PIN    arrival            o PIN    departure
//   pz PIN   break starts       kz PIN   break ends
//   k        who is at work     f        the offline queue
//   odparovat  forget the pairing                q        quit
//
// A punch the server could not answer is kept in the outbox file and sent when the server is back, also after the
// terminal was killed and started again; the terminal says why it waits ("saved offline" only without a connection;
// a server error, an overloaded server with when it goes again), and announces such a punch when it is delivered
// or refused later. A lockout after wrong PINs says when to try again; `help` has an English line too.
//
// `--verbose` prints what the library does (attempts, retries, refreshes, the outbox) on standard error.
//
// PROFIREST_BASE_URL sets the API address (https://api.mujprofirest.cz by default), PROFIREST_TOKENS the token
// file (./profirest-pichacka.json by default — it holds the device's tokens: guard it like a password) and
// PROFIREST_OUTBOX the outbox file (./profirest-pichacka-outbox.json — it holds queued punches with their PINs
// until they are sent). `make demo` sets PROFIREST_DEMO_SANDBOX_PID when it started the sandbox itself, so that
// quitting says the demo stops it.
import Foundation
import ProfirestAPI

/// Prints a line at once, unbuffered, so a terminal and a pipe both see it immediately.
func show(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Prints a prompt without a line break.
func prompt(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
}

/// Standard input, read line by line by one thread for the whole program, so nothing else ever calls `readLine()`:
/// the pairing phase and the command loop take their lines from here, and no reader is left behind to swallow one.
/// While a pairing waits, `q` cancels it at once and `help` explains what to do; any other line waits for the
/// command loop, as it would in the terminal's input buffer.
actor Keyboard {
    private var lines: [String] = []
    private var ended = false
    private var waiter: CheckedContinuation<String?, Never>?
    private var pairing: (code: String, cancel: @Sendable () -> Void)?
    private var quitWhilePairing = false

    /// Starts the one reader: a thread blocked in `readLine()`, its lines handed over in order.
    static func start() -> Keyboard {
        let keyboard = Keyboard()
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        Thread.detachNewThread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        Task {
            for await line in stream { await keyboard.receive(line) }
            await keyboard.receive(nil)
        }
        return keyboard
    }

    /// The next line, nil once standard input has ended.
    func next() async -> String? {
        if !lines.isEmpty { return lines.removeFirst() }
        if ended { return nil }
        return await withCheckedContinuation { waiter = $0 }
    }

    /// While a pairing code is shown: `q` calls `cancel`.
    func pairingStarted(code: String, cancel: @escaping @Sendable () -> Void) {
        pairing = (code, cancel)
        if lines.contains(where: Self.isQuit) { quitWhilePairing = true; cancel() }
    }

    /// The pairing is over; true when `q` was typed meanwhile (also in the moment it finished).
    func pairingEnded() -> Bool {
        pairing = nil
        return quitWhilePairing
    }

    private static func isQuit(_ line: String) -> Bool { line.trimmingCharacters(in: .whitespaces).lowercased() == "q" }

    private func receive(_ line: String?) {
        guard let line else {
            ended = true
            waiter?.resume(returning: nil)
            waiter = nil
            return
        }
        if let pairing {
            if Self.isQuit(line) {
                quitWhilePairing = true
                pairing.cancel()
                return
            }
            let command = line.trimmingCharacters(in: .whitespaces).lowercased()
            if command == "help" || command == "?" {
                show("Čeká se, až vedoucí potvrdí kód \(pairing.code). q = konec (párování se zruší).")
                return
            }
        }
        if let waiting = waiter {
            waiter = nil
            waiting.resume(returning: line)
        } else {
            lines.append(line)
        }
    }
}

/// The terminal's settings, read from the environment.
struct Settings {
    let baseURL: String
    let tokenFile: String
    let outboxFile: String
    /// Set by `make demo` when it started the sandbox itself, which it stops when the terminal ends.
    let demoSandboxPID: String?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        func value(_ name: String, default fallback: String) -> String {
            guard let text = environment[name], !text.isEmpty else { return fallback }
            return text
        }
        baseURL = value("PROFIREST_BASE_URL", default: "https://api.mujprofirest.cz")
        tokenFile = value("PROFIREST_TOKENS", default: "profirest-pichacka.json")
        outboxFile = value("PROFIREST_OUTBOX", default: "profirest-pichacka-outbox.json")
        demoSandboxPID = environment["PROFIREST_DEMO_SANDBOX_PID"].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// Punch commands and the words the terminal shows for attendance states, punches and errors.
enum Vocabulary {
    static let punchTypes: [String: AttendancePunchType] = ["p": .clockIn, "o": .clockOut, "pz": .breakStart, "kz": .breakEnd]
    static let stateNames: [String: String] = ["working": "v práci", "on_break": "na přestávce", "off": "mimo práci"]
    static let punchNames: [String: String] = [
        "clock_in": "příchod", "clock_out": "odchod", "break_start": "začátek přestávky", "break_end": "konec přestávky",
    ]

    static func describe(state: String) -> String { stateNames[state] ?? state }

    /// A time of day as the terminal's clock shows it, "14:05" (formatting only: nothing untrusted is parsed).
    static func clock(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "HH:mm"
        return formatter.string(from: date)
    }

    /// "za 300 s (v 14:10)": when a wait of the server's Retry-After is over; "za chvíli" without one.
    static func after(_ seconds: Int?, now: Date = Date()) -> String {
        guard let seconds else { return "za chvíli" }
        return "za \(seconds) s (v \(clock(now.addingTimeInterval(TimeInterval(seconds)))))"
    }

    /// The terminal's own words for the errors a person meets; the server's title (in Czech) for the rest.
    /// `showsCodes` (--verbose) adds the error's code, for whoever debugs the terminal.
    static func explain(_ error: ProfirestAPIError, showsCodes: Bool) -> String {
        let words: String
        switch error.code {
        case ErrorCode.networkError, ErrorCode.timeout: words = "Server nejde zastihnout – zkuste to za chvíli."
        case ErrorCode.notPaired: words = "Zařízení není spárované – spusťte terminál znovu a spárujte ho."
        case ErrorCode.insufficientScope: words = "Zařízení na to nemá oprávnění – spárujte ho znovu s potřebným oprávněním."
        case ErrorCode.staffLocked:
            words = "Terminál je po špatných PINech zamčený – zkuste to \(after(error.retryAfter))."
        case ErrorCode.staffCredentialsInvalid: words = "Neznámý nebo neaktivní PIN – píchnutí se nezapsalo."
        case ErrorCode.rateLimited: words = "Server je přetížený – zkuste to \(after(error.retryAfter))."
        default: words = "Chyba: \(error.title)"
        }
        return showsCodes ? "\(words) [\(error.code)]" : words
    }

    /// Why a queued punch waits, in the person's words: "saved offline" only without a connection; the server's
    /// trouble, its overload (with when it goes again) and the device's access each as they are.
    static func queued(_ item: OutboxItem, status: OutboxStatus, showsCodes: Bool) -> String {
        let waiting = "čeká \(status.count)"
        // A write not tried (the server's Retry-After held it back) waits for the reason the others wait.
        let failure = status.lastFailure
        let code = item.lastErrorCode ?? failure?.code
        let seconds = failure?.code == code ? failure?.retryAfter : nil
        let words: String
        switch code {
        case ErrorCode.networkError?, ErrorCode.timeout?:
            words = "Uloženo offline – odešle se, až bude spojení (\(waiting))."
        case ErrorCode.rateLimited?:
            words = "Server je přetížený – píchnutí je uložené a odešle se \(after(seconds)) (\(waiting))."
        case ErrorCode.invalidToken?, ErrorCode.notPaired?, ErrorCode.insufficientScope?:
            words = "Zařízení teď nemá přístup k serveru (\(failure?.title ?? "spárování")) – píchnutí je uložené a odešle se, "
                + "až ho zase mít bude (\(waiting))."
        case nil:
            words = "Píchnutí je uložené ve frontě a odešle se samo (\(waiting))."
        default:
            let what = failure.map { "\($0.title)\($0.status >= 500 ? ", \($0.status)" : "")" } ?? "chyba serveru"
            let when = seconds.map { "\(after($0))" } ?? "samo, až server zase odpoví"
            words = "Server má potíže (\(what)) – píchnutí je uložené a odešle se \(when) (\(waiting))."
        }
        return showsCodes ? "\(words) [\(code ?? "-")]" : words
    }

    /// Why the server refused a punch that waited in the queue, as a reason after a colon.
    static func refusal(_ error: ProfirestAPIError) -> String {
        switch error.code {
        case ErrorCode.staffCredentialsInvalid: return "neznámý nebo neaktivní PIN"
        case ErrorCode.staffLocked: return "terminál byl po špatných PINech zamčený"
        case ErrorCode.staffAmbiguous: return "PIN má víc lidí – píchněte znovu a vyberte, kdo jste"
        case ErrorCode.attendanceStateConflict: return "\(error.title.lowercased()) (\(error.detail ?? "stav se mezitím změnil"))"
        default: return error.title
        }
    }

    static let help = """
        Příkazy:
          p PIN     příchod                o PIN     odchod
          pz PIN    začátek přestávky      kz PIN    konec přestávky
          k         kdo je v práci         f         fronta offline (píchnutí bez spojení)
          odparovat zapomenout spárování   q         konec
          help      tato nápověda
        In English: p PIN clock in, o PIN clock out, pz PIN / kz PIN break start / end, k who is at work,
          f the offline queue, odparovat forget the pairing, q quit.
        """
}

/// The punches the terminal said were saved in the queue, so that it tells the person again when one of them is
/// delivered or refused later. A delivery the library reports while the punch is still being handed in is the
/// answer the punch command shows itself — unless the command then hears "queued" (the queue delivered it in
/// between), when it is announced at once.
actor QueuedPunches {
    struct Punch: Sendable {
        let type: String?
        let at: Date
    }

    private var handingIn: Set<String> = []
    private var deliveredMeanwhile: Set<String> = []
    private var queued: [String: Punch] = [:]

    func start(_ id: String) { handingIn.insert(id) }

    /// The punch command's outcome. True when a queued punch was delivered meanwhile (announce it now).
    func finished(_ id: String, queued isQueued: Bool, punch: Punch) -> Bool {
        handingIn.remove(id)
        let delivered = deliveredMeanwhile.remove(id) != nil
        if isQueued, !delivered { queued[id] = punch }
        return isQueued && delivered
    }

    /// Punches left in the queue by an earlier run.
    func remember(_ items: [OutboxItem]) {
        for item in items where item.kind == .punch { queued[item.id] = Punch(type: nil, at: item.enqueuedAt) }
    }

    /// A delivery the library reported: the queued punch to announce, or nil.
    func delivered(_ id: String) -> Punch? {
        if handingIn.contains(id) {
            deliveredMeanwhile.insert(id)
            return nil
        }
        return queued.removeValue(forKey: id)
    }

    /// A queued punch the server refused.
    func refused(_ id: String, enqueuedAt: Date) -> Punch {
        queued.removeValue(forKey: id) ?? Punch(type: nil, at: enqueuedAt)
    }

    /// "příchod z 14:05" or "píchnutí z 14:05".
    static func describe(_ punch: Punch) -> String {
        "\(punch.type.flatMap { Vocabulary.punchNames[$0] } ?? "píchnutí") z \(Vocabulary.clock(punch.at))"
    }
}

/// Tells the person that a punch from the queue was delivered — with whose it was, when the server's list of
/// punches has it.
func announceDelivered(_ api: ProfirestApi, restaurantID: String, id: String, punch: QueuedPunches.Punch) async {
    let recorded = try? await api.attendance.listPunches(restaurantID: restaurantID, limit: 100).data.first { $0.id == id }
    let who = recorded.map { " – \($0.employee.name), \(Vocabulary.describe(state: $0.state))" } ?? ""
    show("Píchnutí z fronty odesláno: \(QueuedPunches.describe(punch))\(who).")
}

/// Pairs the device when it has no tokens yet; exits when pairing fails, and at once (status 0) on `q`.
func ensurePaired(_ api: ProfirestApi, keyboard: Keyboard) async {
    guard !api.isPaired else { return }
    do {
        let pairing = try await api.pair(
            scope: "restaurants:read staff:read staff:authenticate attendance:read attendance:punch",
            deviceName: "Píchačka (příklad)")
        // The keyboard learns of the pairing before the code is shown, so `help` or `q` typed the moment the code
        // appears is already answered as a pairing command.
        await keyboard.pairingStarted(code: pairing.userCode, cancel: { pairing.cancel() })
        show("Zařízení není spárované. Vedoucí potvrdí kód v administraci (Správa PC / zařízení → Připojit zařízení).")
        show("KÓD: \(pairing.userCode)")
        show("nebo otevřete: \(pairing.verificationURIComplete)")
        show("Čekám na potvrzení… q = konec, help = nápověda.")
        do {
            try await pairing.connected()
        } catch {
            _ = await keyboard.pairingEnded()
            throw error
        }
        if await keyboard.pairingEnded() {
            // `q` came just as the manager confirmed: the pairing is kept, the terminal ends as asked.
            show("Spárováno. Konec.")
            exit(0)
        }
        show("Spárováno.")
    } catch is CancellationError {
        show("Párování zrušeno.")
        exit(0)
    } catch let error as ProfirestOAuthError {
        switch error.error {
        case "access_denied": show("Vedoucí párování odmítl.")
        case "expired_token": show("Kód vypršel (platí 10 minut). Spusťte terminál znovu.")
        default: show("Párování se nepovedlo: \(error.message)")
        }
        exit(1)
    } catch {
        show("Párování se nepovedlo: \(error.localizedDescription)")
        exit(1)
    }
}

/// One punch through the outbox: journaled with its id and time before it is sent, so without a connection it
/// waits in the file (also across a restart) and goes out when the server is back. The id is made once, so a repeat
/// after choosing a person is the same punch.
func punch(_ outbox: Outbox, keyboard: Keyboard, queue: QueuedPunches, api: ProfirestApi, restaurantID: String,
           type: AttendancePunchType, pin: String, verbose: Bool) async {
    var body = AttendancePunchCreate(id: ProfirestApi.uuid(), type: type, credential: StaffCredential(method: "pin", secret: pin))
    body.occurredAt = Date()
    let noted = QueuedPunches.Punch(type: type.rawValue, at: body.occurredAt ?? Date())
    await queue.start(body.id)
    while true {
        do {
            switch try await outbox.punch(restaurantID: restaurantID, body) {
            case .delivered(let answer):
                _ = await queue.finished(body.id, queued: false, punch: noted)
                if let recorded = try? answer?.decode(as: AttendancePunch.self) {
                    show("OK: \(recorded.employee.name) – \(Vocabulary.describe(state: recorded.state))")
                } else {
                    show("OK.")
                }
            case .queued(let item):
                show(Vocabulary.queued(item, status: outbox.status, showsCodes: verbose))
                if await queue.finished(body.id, queued: true, punch: noted) {
                    await announceDelivered(api, restaurantID: restaurantID, id: body.id, punch: noted)
                }
            }
            return
        } catch let error as ProfirestAPIError {
            switch error.code {
            case ErrorCode.staffAmbiguous:
                guard let chosen = await choose(from: error.candidates, keyboard: keyboard) else {
                    _ = await queue.finished(body.id, queued: false, punch: noted)
                    return show("Zrušeno.")
                }
                body.credential?.employeeId = chosen
                continue
            case ErrorCode.attendanceStateConflict:
                show("Teď to nejde: \(error.title)")
            case ErrorCode.outboxFull:
                show("Fronta offline je plná – píchnutí se neuložilo.")
            default:
                show(Vocabulary.explain(error, showsCodes: verbose))
            }
            _ = await queue.finished(body.id, queued: false, punch: noted)
            return
        } catch {
            _ = await queue.finished(body.id, queued: false, punch: noted)
            show("Chyba: \(error.localizedDescription)")
            return
        }
    }
}

/// Asks which of the people sharing a PIN is punching; nil when the answer is not one of them.
func choose(from candidates: [JSONValue], keyboard: Keyboard) async -> String? {
    show("Tento PIN má více lidí:")
    for (index, candidate) in candidates.enumerated() {
        show("  \(index + 1)) \(candidate["name"]?.stringValue ?? "?")")
    }
    prompt("Číslo: ")
    guard let number = Int((await keyboard.next() ?? "").trimmingCharacters(in: .whitespaces)),
          candidates.indices.contains(number - 1) else { return nil }
    return candidates[number - 1]["id"]?.stringValue
}

/// Lists who is at work or on a break.
func showPresence(_ api: ProfirestApi, restaurantID: String) async throws {
    let people = try await api.all("/restaurants/\(restaurantID)/attendance/presence", as: AttendancePresence.self)
    if people.isEmpty { show("Nikdo není v práci.") }
    for person in people {
        show("  \(person.employee.name): \(Vocabulary.describe(state: person.state))")
    }
}

/// The whole terminal; kept in a function so nothing is a global (top-level async code would put globals on the main actor).
func runTerminal() async {
    let settings = Settings()
    // The observer hears of queued punches delivered later (announced below); with --verbose it also prints what
    // the library does, one line each on standard error (redacted: no token, PIN or body).
    let verbose = CommandLine.arguments.contains("--verbose")
    let queue = QueuedPunches()
    let deliveries = AsyncStream.makeStream(of: String.self)
    let observer: @Sendable (ProfirestEvent) -> Void = { event in
        if verbose { FileHandle.standardError.write(Data("profirest: \(event)\n".utf8)) }
        if case .outbox(.delivered(let id)) = event { deliveries.continuation.yield(id) }
    }
    let api = ProfirestApi(options: .init(
        baseURL: settings.baseURL,
        clientID: "profirest-dochazka",
        storage: FileTokenStorage(path: settings.tokenFile),
        observer: observer))

    let keyboard = Keyboard.start()
    await ensurePaired(api, keyboard: keyboard)
    if api.restaurantID == nil {
        _ = try? await api.connection()  // learns the device's restaurant
    }
    guard let restaurantID = api.restaurantID else {
        show("Provozovna zařízení není známá (GET /v2/connection selhalo). Spusťte terminál znovu.")
        exit(1)
    }
    let outbox: Outbox
    do {
        outbox = try api.outbox(path: settings.outboxFile, onFailure: { failure in
            Task {
                let punch = await queue.refused(failure.item.id, enqueuedAt: failure.item.enqueuedAt)
                let code = verbose ? " [\(failure.error.code)]" : ""
                show("Píchnutí z fronty (\(QueuedPunches.describe(punch))) server odmítl: \(Vocabulary.refusal(failure.error)).\(code)")
            }
        })
    } catch {
        show("Frontu offline nejde otevřít: \(error)")
        exit(1)
    }
    // Delivers what waits in the outbox now and whenever the connection comes back, until the terminal ends.
    await queue.remember(outbox.items)
    let delivering = Task { await outbox.run() }
    let announcing = Task {
        for await id in deliveries.stream {
            if let punch = await queue.delivered(id) {
                await announceDelivered(api, restaurantID: restaurantID, id: id, punch: punch)
            }
        }
    }
    defer {
        delivering.cancel()
        announcing.cancel()
    }
    show("Provozovna \(restaurantID). Příkazy: p/o/pz/kz PIN, k, f, odparovat, q; help = nápověda (help in English too).")
    if outbox.status.count > 0 { show("Ve frontě offline čeká \(outbox.status.count) píchnutí.") }

    while let line = await keyboard.next() {
        let words = line.split(separator: " ", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        let command = words.first?.lowercased() ?? ""
        do {
            if let type = Vocabulary.punchTypes[command], words.count == 2, !words[1].isEmpty {
                await punch(outbox, keyboard: keyboard, queue: queue, api: api, restaurantID: restaurantID, type: type,
                            pin: words[1], verbose: verbose)
            } else if Vocabulary.punchTypes[command] != nil {
                show("Chybí PIN: napište \(command) a PIN, např. \(command) 1234. (PIN missing: type \(command) and the PIN.)")
            } else if command == "k" {
                try await showPresence(api, restaurantID: restaurantID)
            } else if command == "help" || command == "?" {
                show(Vocabulary.help)
            } else if command == "f" {
                let status = outbox.status
                show("Ve frontě offline: \(status.count)\(status.lastFailure.map { " (naposledy: \($0.code))" } ?? "").")
            } else if command == "odparovat" {
                await api.unpair()
                show("Spárování zapomenuto.")
                return
            } else if command == "q" {
                break
            } else if !command.isEmpty {
                show("Neznámý příkaz. Napište help.")
            }
        } catch let error as ProfirestAPIError where error.code == ErrorCode.notPaired {
            show("Zařízení bylo odpárováno. Spusťte terminál znovu.")
            exit(1)
        } catch let error as ProfirestAPIError {
            show(Vocabulary.explain(error, showsCodes: verbose))
        } catch {
            show("Chyba: \(error.localizedDescription)")
        }
    }
    // Before the terminal ends: one more try for what waits (it stays in the file when that fails too).
    let left = await outbox.flush()
    if left.count > 0 { show("Ve frontě offline zůstává \(left.count) píchnutí; odešlou se při dalším spuštění.") }
    if let pid = settings.demoSandboxPID {
        show("Konec. Demo teď zastaví sandbox, který spustilo (pid \(pid)). / Quitting: the demo now stops the sandbox it started.")
    } else {
        show("Konec.")
    }
}

await runTerminal()
