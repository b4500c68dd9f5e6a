import Foundation

// A custom transport (a proxy, a test double) is where requests get printed: the Authorization and staff-token
// headers show as `<redacted>` and bodies only by size, since a token request, a token answer and a staff
// sign-in carry secrets in their bodies (RedactedFields.swift).

extension HTTPRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The method, URL, headers and the body's size, with credential headers redacted, so that a transport of your
    /// own may log requests without leaking a token.
    public var description: String { RedactedFields.description(of: "HTTPRequest", safeFields) }

    /// The same redacted text as ``description``, for `debugPrint`.
    public var debugDescription: String { description }

    /// Shows `dump` and debuggers the same redacted fields as ``description``, never a token or a body.
    public var customMirror: Mirror { Mirror(self, children: safeFields, displayStyle: .struct) }

    private var safeFields: [Mirror.Child] {
        [
            ("method", method), ("url", url), ("headers", RedactedFields.headersValue(headers)),
            ("body", RedactedFields.bodyValue(body)), ("timeout", timeout),
        ]
    }
}
