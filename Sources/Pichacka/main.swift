// Pichacka — an attendance terminal on the command line, the example client of ProfirestAPI.
//
//   swift run Pichacka            (or `make demo`, which starts the local sandbox first)
//
// On its first run it pairs this computer as a device: it prints a code that a manager confirms in the
// administration (PC / devices → Connect a device) and keeps the tokens in a file. Then it reads commands:
//
//   p PIN    arrival            o PIN    departure
//   pz PIN   break starts       kz PIN   break ends
//   k        who is at work     odparovat  forget the pairing     q  quit
//
// PROFIREST_BASE_URL sets the API address (https://api.mujprofirest.cz by default) and PROFIREST_TOKENS the token
// file (./profirest-pichacka.json by default — it holds the device's tokens: guard it like a password).
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

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        func value(_ name: String, default fallback: String) -> String {
            guard let text = environment[name], !text.isEmpty else { return fallback }
            return text
        }
        baseURL = value("PROFIREST_BASE_URL", default: "https://api.mujprofirest.cz")
        tokenFile = value("PROFIREST_TOKENS", default: "profirest-pichacka.json")
    }
}

/// Punch commands and the words the terminal shows for attendance states.
enum Vocabulary {
    static let punchTypes: [String: AttendancePunchType] = ["p": .clockIn, "o": .clockOut, "pz": .breakStart, "kz": .breakEnd]
    static let stateNames: [String: String] = ["working": "v práci", "on_break": "na přestávce", "off": "mimo práci"]

    static func describe(state: String) -> String { stateNames[state] ?? state }
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

/// One punch. The id is made once, so a repeat after choosing a person or after an outage is the same punch.
func punch(_ api: ProfirestApi, restaurantID: String, type: AttendancePunchType, pin: String) async {
    var body = AttendancePunchCreate(id: ProfirestApi.uuid(), type: type, credential: StaffCredential(method: "pin", secret: pin))
    while true {
        do {
            let recorded: AttendancePunch = try await api.post("/restaurants/\(restaurantID)/attendance/punches", body: body)
            show("OK: \(recorded.employee.name) – \(Vocabulary.describe(state: recorded.state))")
            return
        } catch let error as ProfirestAPIError {
            switch error.code {
            case ErrorCode.staffAmbiguous:
                guard let chosen = choose(from: error.candidates) else { return show("Zrušeno.") }
                body.credential?.employeeId = chosen
                continue
            case ErrorCode.staffCredentialsInvalid:
                show("Neznámý PIN.")
            case ErrorCode.staffLocked:
                show("Příliš mnoho špatných pokusů – zkuste to za \(error.retryAfter.map(String.init) ?? "?") s.")
            case ErrorCode.attendanceStateConflict:
                show("Teď to nejde: \(error.title)")
            case ErrorCode.networkError, ErrorCode.timeout:
                show("Bez spojení – zkuste to znovu.")  // a real terminal queues the punch and sends a batch later
            case ErrorCode.notPaired:
                show("Zařízení bylo odpárováno. Spusťte terminál znovu.")
                exit(1)
            default:
                show("Chyba: \(error.title) (\(error.code))")
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
    let api = ProfirestApi(options: .init(
        baseURL: settings.baseURL,
        clientID: "profirest-dochazka",
        storage: FileTokenStorage(path: settings.tokenFile)))

    await ensurePaired(api)
    if api.restaurantID == nil {
        _ = try? await api.connection()  // learns the device's restaurant
    }
    guard let restaurantID = api.restaurantID else {
        show("Provozovna zařízení není známá (GET /v2/connection selhalo). Spusťte terminál znovu.")
        exit(1)
    }
    show("Provozovna \(restaurantID). Příkazy: p/o/pz/kz PIN, k = kdo je v práci, odparovat, q = konec.")

    while let line = readLine() {
        let words = line.split(separator: " ", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        let command = words.first?.lowercased() ?? ""
        do {
            if let type = Vocabulary.punchTypes[command], words.count == 2 {
                await punch(api, restaurantID: restaurantID, type: type, pin: words[1])
            } else if command == "k" {
                try await showPresence(api, restaurantID: restaurantID)
            } else if command == "odparovat" {
                await api.unpair()
                show("Spárování zapomenuto.")
                return
            } else if command == "q" {
                return
            } else if !command.isEmpty {
                show("Příkazy: p/o/pz/kz PIN, k, odparovat, q")
            }
        } catch let error as ProfirestAPIError where error.code == ErrorCode.notPaired {
            show("Zařízení bylo odpárováno. Spusťte terminál znovu.")
            exit(1)
        } catch let error as ProfirestAPIError {
            show("Chyba: \(error.title) (\(error.code))")
        } catch {
            show("Chyba: \(error.localizedDescription)")
        }
    }
}

await runTerminal()
