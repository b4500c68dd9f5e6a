import Foundation

// What the public types that hold a secret show of themselves. An app developer prints, interpolates and dumps
// values while debugging, and a crash reporter reflects them; each of these may end up in a log, so a token, a
// client secret, a PIN or a PKCE verifier shows only as present (`<redacted>`) or absent (`nil`). One list of
// fields per type feeds both the description and the mirror, so `print` and `dump` cannot disagree.

/// Stands in for a secret in descriptions and mirrors: it tells only whether a value is there.
struct RedactedSecret: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let isPresent: Bool

    init<T>(_ value: T?) { isPresent = value != nil }

    var description: String { isPresent ? "<redacted>" : "nil" }
    var debugDescription: String { description }
    // No children: `dump` then prints the description and stops.
    var customMirror: Mirror { Mirror(self, children: [Mirror.Child]()) }
}

/// Builds `Type(label: value, …)` the way Swift prints a struct by default, from fields already made safe.
enum RedactedFields {
    static func description(of typeName: String, _ fields: [Mirror.Child]) -> String {
        let parts = fields.map { "\($0.label ?? "_"): \(String(reflecting: $0.value))" }
        return typeName + "(" + parts.joined(separator: ", ") + ")"
    }

    /// Header names whose values are credentials; any other header (Accept, Idempotency-Key, …) helps debugging.
    static func isSecretHeader(_ name: String) -> Bool {
        let lower = name.lowercased()
        if ["authorization", "proxy-authorization", "cookie", "set-cookie"].contains(lower) { return true }
        return ["token", "secret", "password", "api-key", "apikey"].contains { lower.contains($0) }
    }

    /// Headers sorted by name (a dictionary's order changes from run to run), credential values redacted.
    static func headers(_ headers: [String: String]) -> [(String, Any)] {
        headers.sorted { $0.key < $1.key }.map { name, value in
            (name, isSecretHeader(name) ? RedactedSecret(value) as Any : value as Any)
        }
    }

    /// A headers dictionary as a printable value: `["Accept": "application/json", "Authorization": <redacted>]`.
    static func headersValue(_ headers: [String: String]) -> SafeHeaders { SafeHeaders(entries: Self.headers(headers)) }

    /// A body shows only its size: it may be a token request or a sign-in with a PIN.
    static func bodyValue(_ body: Data?) -> BodySize { BodySize(count: body?.count) }
}

/// Headers as `print` and `dump` show them: names and safe values, in name order.
struct SafeHeaders: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let entries: [(String, Any)]

    var description: String {
        if entries.isEmpty { return "[:]" }
        return "[" + entries.map { "\(String(reflecting: $0.0)): \(String(reflecting: $0.1))" }.joined(separator: ", ") + "]"
    }
    var debugDescription: String { description }
    var customMirror: Mirror {
        Mirror(self, children: entries.map { Mirror.Child(label: $0.0, value: $0.1) }, displayStyle: .dictionary)
    }
}

/// A body as `print` and `dump` show it: `<n bytes>` or `nil`.
struct BodySize: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let count: Int?

    var description: String { count.map { "<\($0) bytes>" } ?? "nil" }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: [Mirror.Child]()) }
}
