// Pichacka — an attendance terminal on the command line, the example client of ProfirestAPI.
//
//   swift run Pichacka            (or `make demo`, which starts the local sandbox first)
//
// On its first run it pairs this computer as a device: it prints a code that a manager confirms in the
// administration (PC / devices → Connect a device) and keeps the tokens in a file. Then it reads commands:
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

/// Pairs the device when it has no tokens yet; exits when pairing fails.
func ensurePaired(_ api: ProfirestApi) async {
    guard !api.isPaired else { return }
    do {
        let pairing = try await api.pair(
            scope: "restaurants:read staff:read staff:authenticate attendance:read attendance:punch",
            deviceName: "Píchačka (příklad)")
        show("Zařízení není spárované. Vedoucí potvrdí kód v administraci (Správa PC / zařízení → Připojit zařízení).")
        show("KÓD: \(pairing.userCode)")
        show("nebo otevřete: \(pairing.verificationURIComplete)")
        try await pairing.connected()
        show("Spárováno.")
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
func punch(_ outbox: Outbox, restaurantID: String, type: AttendancePunchType, pin: String, verbose: Bool) async {
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
                guard let chosen = choose(from: error.candidates) else { return show("Zrušeno.") }
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
func choose(from candidates: [JSONValue]) -> String? {
    show("Tento PIN má více lidí:")
    for (index, candidate) in candidates.enumerated() {
        show("  \(index + 1)) \(candidate["name"]?.stringValue ?? "?")")
    }
    prompt("Číslo: ")
    guard let number = Int((readLine() ?? "").trimmingCharacters(in: .whitespaces)),
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

    await ensurePaired(api)
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

    while let line = readLine() {
        let words = line.split(separator: " ", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        let command = words.first?.lowercased() ?? ""
        do {
            if let type = Vocabulary.punchTypes[command], words.count == 2 {
                await punch(outbox, restaurantID: restaurantID, type: type, pin: words[1], verbose: verbose)
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
