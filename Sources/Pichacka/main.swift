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
// A punch made without a connection is kept in the outbox file and sent when the server is back, also after the
// terminal was killed and started again.
//
// `--verbose` prints what the library does (attempts, retries, refreshes, the outbox) on standard error.
//
// PROFIREST_BASE_URL sets the API address (https://api.mujprofirest.cz by default), PROFIREST_TOKENS the token
// file (./profirest-pichacka.json by default — it holds the device's tokens: guard it like a password) and
// PROFIREST_OUTBOX the outbox file (./profirest-pichacka-outbox.json — it holds queued punches with their PINs
// until they are sent).
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

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        func value(_ name: String, default fallback: String) -> String {
            guard let text = environment[name], !text.isEmpty else { return fallback }
            return text
        }
        baseURL = value("PROFIREST_BASE_URL", default: "https://api.mujprofirest.cz")
        tokenFile = value("PROFIREST_TOKENS", default: "profirest-pichacka.json")
        outboxFile = value("PROFIREST_OUTBOX", default: "profirest-pichacka-outbox.json")
    }
}

/// Punch commands and the words the terminal shows for attendance states.
enum Vocabulary {
    static let punchTypes: [String: AttendancePunchType] = ["p": .clockIn, "o": .clockOut, "pz": .breakStart, "kz": .breakEnd]
    static let stateNames: [String: String] = ["working": "v práci", "on_break": "na přestávce", "off": "mimo práci"]

    static func describe(state: String) -> String { stateNames[state] ?? state }

    /// The terminal's own words for the errors a person meets; the server's title (in Czech) for the rest.
    /// `showsCodes` (--verbose) adds the error's code, for whoever debugs the terminal.
    static func explain(_ error: ProfirestAPIError, showsCodes: Bool) -> String {
        let words: String
        switch error.code {
        case ErrorCode.networkError, ErrorCode.timeout: words = "Server nejde zastihnout – zkuste to za chvíli."
        case ErrorCode.notPaired: words = "Zařízení není spárované – spusťte terminál znovu a spárujte ho."
        case ErrorCode.insufficientScope: words = "Zařízení na to nemá oprávnění – spárujte ho znovu s potřebným oprávněním."
        case ErrorCode.staffLocked:
            words = "Příliš mnoho špatných pokusů – zkuste to za \(error.retryAfter.map(String.init) ?? "chvíli") s."
        case ErrorCode.rateLimited: words = "Server je přetížený – zkuste to za chvíli."
        default: words = "Chyba: \(error.title)"
        }
        return showsCodes ? "\(words) [\(error.code)]" : words
    }

    static let help = """
        Příkazy:
          p PIN     příchod                o PIN     odchod
          pz PIN    začátek přestávky      kz PIN    konec přestávky
          k         kdo je v práci         f         fronta offline (píchnutí bez spojení)
          odparovat zapomenout spárování   q         konec
          help      tato nápověda
        """
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
func punch(_ outbox: Outbox, keyboard: Keyboard, restaurantID: String, type: AttendancePunchType, pin: String,
           verbose: Bool) async {
    var body = AttendancePunchCreate(id: ProfirestApi.uuid(), type: type, credential: StaffCredential(method: "pin", secret: pin))
    while true {
        do {
            switch try await outbox.punch(restaurantID: restaurantID, body) {
            case .delivered(let answer):
                if let recorded = try? answer?.decode(as: AttendancePunch.self) {
                    show("OK: \(recorded.employee.name) – \(Vocabulary.describe(state: recorded.state))")
                } else {
                    show("OK.")
                }
            case .queued:
                show("Uloženo offline – odešle se, až bude spojení (čeká \(outbox.status.count)).")
            }
            return
        } catch let error as ProfirestAPIError {
            switch error.code {
            case ErrorCode.staffAmbiguous:
                guard let chosen = await choose(from: error.candidates, keyboard: keyboard) else { return show("Zrušeno.") }
                body.credential?.employeeId = chosen
                continue
            case ErrorCode.staffCredentialsInvalid:
                show("Neznámý PIN.")
            case ErrorCode.attendanceStateConflict:
                show("Teď to nejde: \(error.title)")
            case ErrorCode.outboxFull:
                show("Fronta offline je plná – píchnutí se neuložilo.")
            default:
                show(Vocabulary.explain(error, showsCodes: verbose))
            }
            return
        } catch {
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
    // --verbose: what the library does, one line each on standard error (redacted: no token, PIN or body).
    var observer: (@Sendable (ProfirestEvent) -> Void)?
    let verbose = CommandLine.arguments.contains("--verbose")
    if verbose {
        observer = { event in FileHandle.standardError.write(Data("profirest: \(event)\n".utf8)) }
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
            show("Píchnutí z fronty server odmítl: \(failure.error.title) (\(failure.error.code))")
        })
    } catch {
        show("Frontu offline nejde otevřít: \(error)")
        exit(1)
    }
    // Delivers what waits in the outbox now and whenever the connection comes back, until the terminal ends.
    let delivering = Task { await outbox.run() }
    defer { delivering.cancel() }
    show("Provozovna \(restaurantID). Příkazy: p/o/pz/kz PIN, k, f, odparovat, q; help = nápověda.")
    if outbox.status.count > 0 { show("Ve frontě offline čeká \(outbox.status.count) píchnutí.") }

    while let line = await keyboard.next() {
        let words = line.split(separator: " ", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        let command = words.first?.lowercased() ?? ""
        do {
            if let type = Vocabulary.punchTypes[command], words.count == 2 {
                await punch(outbox, keyboard: keyboard, restaurantID: restaurantID, type: type, pin: words[1], verbose: verbose)
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
}

await runTerminal()
