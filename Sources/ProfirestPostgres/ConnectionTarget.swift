import CProfirestPQ
import Foundation

/// Where a storage connects, read once from its connection string: what a description or an error may show (user,
/// host, port, database), the password only to keep it out of every message, and the arguments of
/// PQconnectdbParams.
struct ConnectionTarget: Sendable {
    /// `postgresql://user@host:port/database`, as far as the connection string says; never the password.
    let summary: String
    private let password: String?
    /// PQconnectdbParams's keywords and values. The connection string is expanded from `dbname`: the entries before it
    /// are defaults the string may override, the one after it is not.
    let keywords: [String]
    let values: [String]

    /// Reads `connectionString` (`key=value …` pairs or a `postgresql://` URI); nil when libpq cannot parse it.
    init?(connectionString: String) {
        guard let options = pfq_conninfo_parse(connectionString) else { return nil }
        defer { pfq_conninfo_free(options) }
        func value(_ keyword: String) -> String? {
            pfq_conninfo_value(options, keyword).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        password = value("password")
        let user = value("user").map { $0 + "@" } ?? ""
        let port = value("port").map { ":" + $0 } ?? ""
        let host = value("host") ?? value("hostaddr") ?? "localhost"
        summary = "postgresql://\(user)\(host)\(port)/\(value("dbname") ?? "")"
        keywords = [
            // Without a connect_timeout an unreachable server blocks the caller for the system's TCP timeout;
            // keepalives end a session whose server vanished (a lock waiter would otherwise wait forever).
            "connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
            "application_name", "dbname",
            // The storage reads and writes UTF-8 text.
            "client_encoding",
        ]
        values = ["10", "1", "30", "10", "3", "profirest-api", connectionString, "UTF8"]
    }

    /// `message` without the password (libpq does not quote it, but a message is never trusted to leave it out).
    func redact(_ message: String) -> String {
        guard let password else { return message }
        var text = message
        for form in [password, password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password] {
            text = text.replacingOccurrences(of: form, with: "•••")
        }
        return text
    }
}
