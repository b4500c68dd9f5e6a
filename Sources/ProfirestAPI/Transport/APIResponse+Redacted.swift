import Foundation

// A custom transport (a proxy, a test double) is where responses get printed: the Authorization and staff-token
// headers show as `<redacted>` and bodies only by size, since a token request, a token answer and a staff
// sign-in carry secrets in their bodies (RedactedFields.swift).

extension APIResponse: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The status, headers and the body's size, with credential headers redacted, so that a response may be logged
    /// even when its body carries tokens (a token endpoint's answer).
    public var description: String { RedactedFields.description(of: "APIResponse", safeFields) }

    /// The same redacted text as ``description``, for `debugPrint`.
    public var debugDescription: String { description }

    /// Shows `dump` and debuggers the same redacted fields as ``description``, never a token or a body.
    public var customMirror: Mirror { Mirror(self, children: safeFields, displayStyle: .struct) }

    private var safeFields: [Mirror.Child] {
        [("status", status), ("headers", RedactedFields.headersValue(headers)), ("data", RedactedFields.bodyValue(data))]
    }
}
