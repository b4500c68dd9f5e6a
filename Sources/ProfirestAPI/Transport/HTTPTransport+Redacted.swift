import Foundation

// A custom transport (a proxy, a test double) is where requests get printed: the Authorization and staff-token
// headers show as `<redacted>` and bodies only by size, since a token request, a token answer and a staff
// sign-in carry secrets in their bodies (RedactedFields.swift).

extension HTTPRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Method, URL, headers with credentials redacted, and the body's size. Usage: `print(request)`
    public var description: String { RedactedFields.description(of: "HTTPRequest", safeFields) }

    /// The same as `description`. Usage: `debugPrint(request)`
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: the same fields as `description`. Usage: `dump(request)`
    public var customMirror: Mirror { Mirror(self, children: safeFields, displayStyle: .struct) }

    private var safeFields: [Mirror.Child] {
        [
            ("method", method), ("url", url), ("headers", RedactedFields.headersValue(headers)),
            ("body", RedactedFields.bodyValue(body)), ("timeout", timeout),
        ]
    }
}

extension APIResponse: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Status, headers with credentials redacted, and the body's size. Usage: `print(response)`
    public var description: String { RedactedFields.description(of: "APIResponse", safeFields) }

    /// The same as `description`. Usage: `debugPrint(response)`
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: the same fields as `description`. Usage: `dump(response)`
    public var customMirror: Mirror { Mirror(self, children: safeFields, displayStyle: .struct) }

    private var safeFields: [Mirror.Child] {
        [("status", status), ("headers", RedactedFields.headersValue(headers)), ("data", RedactedFields.bodyValue(data))]
    }
}
