/// Whether and which `Idempotency-Key` a request carries (see `Pipeline/IdempotencyKey.swift`).
///
/// ```swift
/// try await api.post(path, body: order, options: .init(idempotencyKey: .key("order-\(localID)")))
/// ```
public enum IdempotencyKeyOption: Sendable, Hashable, ExpressibleByStringLiteral {
    /// A new key for each POST call, repeated on its automatic retries (the default).
    case auto
    /// No key.
    case none
    /// Your own key, stored with the record so a repeat after a restart is recognised.
    case key(String)

    /// Your own key, written as a string literal: the same as `.key(…)`.
    ///
    /// - Parameter value: your key; the same text names the same write.
    ///
    /// ```swift
    /// let option: IdempotencyKeyOption = "order-42"
    /// ```
    public init(stringLiteral value: String) { self = .key(value) }
}

/// Whether a request carries the signed-in employee's `Profirest-Staff-Token`.
///
/// ```swift
/// try await api.post("/restaurants/\(rid)/receipts", body: receipt, options: .init(staff: .required))
/// ```
public enum StaffOption: Sendable, Hashable {
    /// Send it when an employee is signed in (the default).
    case auto
    /// Require a signed-in employee: without one the call fails with `staff_session_required` and nothing is sent.
    case required
    /// Never send it.
    case none
    /// Send this staff token.
    case token(String)
}

/// Which `Authorization` a request carries.
///
/// ```swift
/// let metadata: JSONValue = try await api.get("/.well-known/oauth-authorization-server", options: .init(auth: .none))
/// ```
public enum AuthOption: Sendable, Hashable {
    /// The connection's access token, when there is one (the default).
    case auto
    /// No `Authorization` header.
    case none
    /// This bearer token instead of the connection's; never refreshed.
    case bearer(String)
}
