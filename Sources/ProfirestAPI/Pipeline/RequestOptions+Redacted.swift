import Foundation

// Per-request options can carry a bearer token, a staff token and headers of the app's own; logging the options
// of a failed call must not log those (RedactedFields.swift).

extension RequestOptions: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Every option; tokens and credential headers only as `<redacted>`.
    ///
    /// ```swift
    /// print(options)
    /// ```
    public var description: String { RedactedFields.description(of: "RequestOptions", safeFields) }

    /// The same as `description`.
    ///
    /// ```swift
    /// debugPrint(options)
    /// ```
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: the same fields as `description`.
    ///
    /// ```swift
    /// dump(options)
    /// ```
    public var customMirror: Mirror { Mirror(self, children: safeFields, displayStyle: .struct) }

    private var safeFields: [Mirror.Child] {
        [
            ("query", query), ("idempotencyKey", idempotencyKey), ("ifMatch", ifMatch as Any),
            ("ifNoneMatch", ifNoneMatch as Any), ("staff", staff), ("retries", retries as Any),
            ("timeout", timeout as Any), ("accept", accept as Any), ("contentType", contentType as Any),
            ("headers", RedactedFields.headersValue(headers)), ("auth", auth),
        ]
    }
}

extension AuthOption: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `auto`, `none` or `bearer(<redacted>)`.
    ///
    /// ```swift
    /// print(options.auth)
    /// ```
    public var description: String {
        switch self {
        case .auto: return "auto"
        case .none: return "none"
        case .bearer: return "bearer(<redacted>)"
        }
    }

    /// The same as `description`.
    ///
    /// ```swift
    /// debugPrint(options.auth)
    /// ```
    public var debugDescription: String { description }

    /// No children, so `dump` shows the description and never the token.
    ///
    /// ```swift
    /// dump(options.auth)
    /// ```
    public var customMirror: Mirror { Mirror(self, children: [Mirror.Child](), displayStyle: .enum) }
}

extension StaffOption: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `auto`, `required`, `none` or `token(<redacted>)`.
    ///
    /// ```swift
    /// print(options.staff)
    /// ```
    public var description: String {
        switch self {
        case .auto: return "auto"
        case .required: return "required"
        case .none: return "none"
        case .token: return "token(<redacted>)"
        }
    }

    /// The same as `description`.
    ///
    /// ```swift
    /// debugPrint(options.staff)
    /// ```
    public var debugDescription: String { description }

    /// No children, so `dump` shows the description and never the token.
    ///
    /// ```swift
    /// dump(options.staff)
    /// ```
    public var customMirror: Mirror { Mirror(self, children: [Mirror.Child](), displayStyle: .enum) }
}
