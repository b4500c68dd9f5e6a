/// Codes and titles of the errors the library makes itself (no problem+json to read them from).
///
/// The one internal place that names codes by string until the generated `ErrorCatalog` lands on main;
/// then titles come from it and this table shrinks to nothing.
enum ErrorTitles {
    struct Entry {
        let status: Int
        let retryable: Bool
        let cs: String
        let en: String
    }

    static let table: [String: Entry] = [
        "network_error": Entry(status: 0, retryable: true, cs: "Server nejde zastihnout", en: "The server cannot be reached"),
        "timeout": Entry(status: 0, retryable: true, cs: "Odpověď nepřišla včas", en: "No answer in time"),
        "not_paired": Entry(status: 401, retryable: false, cs: "Zařízení není spárované", en: "The device is not paired"),
        "unexpected_redirect": Entry(status: 300, retryable: false, cs: "Neočekávané přesměrování", en: "Unexpected redirect"),
        "staff_session_required": Entry(status: 403, retryable: false, cs: "Je třeba přihlásit zaměstnance", en: "An employee must sign in"),
        "invalid_response": Entry(status: 0, retryable: false, cs: "Neočekávaná odpověď serveru", en: "Unexpected server response"),
        "http_error": Entry(status: 0, retryable: false, cs: "Chyba HTTP", en: "HTTP error"),
        // Server codes the library falls back to when an error body is not problem+json (a proxy's HTML page).
        "bad_request": Entry(status: 400, retryable: false, cs: "Neplatný požadavek", en: "Bad request"),
        "invalid_token": Entry(status: 401, retryable: false, cs: "Neplatný nebo prošlý token", en: "Invalid or expired token"),
        "not_found": Entry(status: 404, retryable: false, cs: "Nenalezeno", en: "Not found"),
        "method_not_allowed": Entry(status: 405, retryable: false, cs: "Metoda není povolena", en: "Method not allowed"),
        "not_acceptable": Entry(status: 406, retryable: false, cs: "Nelze odpovědět v požadovaném formátu", en: "Cannot answer in the requested format"),
        "precondition_failed": Entry(status: 412, retryable: false, cs: "Záznam se mezitím změnil", en: "The record changed meanwhile"),
        "payload_too_large": Entry(status: 413, retryable: false, cs: "Tělo je příliš velké", en: "The body is too large"),
        "unsupported_media_type": Entry(status: 415, retryable: false, cs: "Nepodporovaný typ obsahu", en: "Unsupported content type"),
        "precondition_required": Entry(status: 428, retryable: false, cs: "Chybí If-Match", en: "If-Match is missing"),
        "rate_limited": Entry(status: 429, retryable: true, cs: "Příliš mnoho požadavků", en: "Too many requests"),
        "internal_error": Entry(status: 500, retryable: true, cs: "Chyba serveru", en: "Server error"),
        "bad_gateway": Entry(status: 502, retryable: true, cs: "Chyba brány", en: "Bad gateway"),
        "service_unavailable": Entry(status: 503, retryable: true, cs: "Služba je dočasně nedostupná", en: "Service temporarily unavailable"),
        "gateway_timeout": Entry(status: 504, retryable: true, cs: "Brána neodpověděla včas", en: "Gateway timeout"),
    ]

    /// The code an error status means when the body says nothing; `http_error` where a status is ambiguous
    /// (a 403 or 409 without a code could be any of several catalog codes).
    static func fallbackCode(forStatus status: Int) -> String {
        switch status {
        case 400: return "bad_request"
        case 401: return "invalid_token"
        case 404: return "not_found"
        case 405: return "method_not_allowed"
        case 406: return "not_acceptable"
        case 412: return "precondition_failed"
        case 413: return "payload_too_large"
        case 415: return "unsupported_media_type"
        case 428: return "precondition_required"
        case 429: return "rate_limited"
        case 500: return "internal_error"
        case 502: return "bad_gateway"
        case 503: return "service_unavailable"
        case 504: return "gateway_timeout"
        default: return "http_error"
        }
    }

    static func title(_ code: String, language: String?) -> String {
        guard let entry = table[code] else { return code }
        return language?.lowercased().hasPrefix("en") == true ? entry.en : entry.cs
    }
}
