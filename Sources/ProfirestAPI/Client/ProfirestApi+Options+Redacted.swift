import Foundation

// `print(options)`, `dump(options)` and `dump(api)` are what an app developer tries first; they must not show the
// client secret or a fixed access token (RedactedFields.swift). Storage and transport show only their type: an
// app's own storage or transport may hold tokens and requests, and its mirror is not ours to trust.

extension ProfirestApi.Options: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Every option, the client secret and access token only as `<redacted>` or `nil`.
    ///
    /// ```swift
    /// print(options)
    /// ```
    public var description: String { RedactedFields.description(of: "ProfirestApi.Options", safeFields) }

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
            ("baseURL", Origin.redactingUserInfo(baseURL)), ("clientID", clientID as Any), ("clientSecret", RedactedSecret(clientSecret)),
            ("accessToken", RedactedSecret(accessToken)), ("language", language as Any),
            ("storage", TypeName(storage)), ("storageKey", effectiveStorageKey), ("retries", retries),
            ("retryDelay", retryDelay), ("maxRetryWait", maxRetryWait), ("timeout", timeout),
            ("refreshMargin", refreshMargin), ("onUnpaired", FunctionSet(onUnpaired != nil)),
            ("onStaffExpired", FunctionSet(onStaffExpired != nil)), ("transport", transport.map(TypeName.init) as Any),
            ("clock", FunctionSet(clock != nil)), ("sleep", FunctionSet(sleep != nil)),
            ("observer", FunctionSet(observer != nil)), ("trustedCertificates", trustedCertificates as Any),
            ("maxResponseBytes", maxResponseBytes),
        ]
    }
}

extension ProfirestApi: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The options and the connection as far as it is safe to log.
    ///
    /// ```swift
    /// print(api)
    /// ```
    public var description: String {
        RedactedFields.description(of: "ProfirestApi", [("options", options), ("identity", identity)])
    }

    /// The same as `description`.
    ///
    /// ```swift
    /// debugPrint(api)
    /// ```
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: the options and the identity's own redacted mirror, never the core
    /// (its transport may have recorded requests with their tokens).
    ///
    /// ```swift
    /// dump(api)
    /// ```
    public var customMirror: Mirror {
        Mirror(self, children: ["options": options, "identity": identity], displayStyle: .class)
    }
}

/// A value shown by its type only, e.g. `MemoryTokenStorage`.
struct TypeName: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let name: String
    init(_ value: Any) { name = String(describing: type(of: value)) }
    var description: String { name }
    var debugDescription: String { name }
    var customMirror: Mirror { Mirror(self, children: [Mirror.Child]()) }
}

/// A closure option shown as set or not; `dump` would print `(Function)` for any closure anyway.
struct FunctionSet: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let isSet: Bool
    init(_ isSet: Bool) { self.isSet = isSet }
    var description: String { isSet ? "<function>" : "nil" }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: [Mirror.Child]()) }
}
