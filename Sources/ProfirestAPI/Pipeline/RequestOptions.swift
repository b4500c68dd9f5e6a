import Foundation

/// Per-request options. Every one has a default, so pass only what you need.
///
/// ```swift
/// let catalog: Catalog = try await api.get("/restaurants/11/catalog", options: .init(query: ["channel": "pos"]))
/// ```
public struct RequestOptions: Sendable, Hashable {
    /// Query parameters; empty values are left out, lists joined with commas.
    ///
    /// ```swift
    /// .init(query: ["limit": 50])
    /// ```
    public var query: [String: QueryValue]
    /// The Idempotency-Key: `.auto` (POST only), `.none`, `.key(…)` or a string.
    ///
    /// ```swift
    /// .init(idempotencyKey: "k1")
    /// ```
    public var idempotencyKey: IdempotencyKey
    /// `If-Match`, e.g. the ETag of a read.
    ///
    /// ```swift
    /// .init(ifMatch: r.header("ETag"))
    /// ```
    public var ifMatch: String?
    /// `If-None-Match`; a 304 answer then returns with status 304 and no body.
    ///
    /// ```swift
    /// .init(ifNoneMatch: etag)
    /// ```
    public var ifNoneMatch: String?
    /// The staff token: `.auto`, `.required`, `.none`, `.token(…)`.
    ///
    /// ```swift
    /// .init(staff: .required)
    /// ```
    public var staff: Staff
    /// Retries for this request instead of the client's `retries`.
    ///
    /// ```swift
    /// .init(retries: 0)
    /// ```
    public var retries: Int?
    /// The limit of one attempt, body included, instead of the client's `timeout`.
    ///
    /// ```swift
    /// .init(timeout: 120)
    /// ```
    public var timeout: TimeInterval?
    /// The most bytes this answer's body may have instead of the client's `maxResponseBytes`, for a large download.
    ///
    /// ```swift
    /// .init(accept: "application/zip", maxResponseBytes: 2 << 30)
    /// ```
    public var maxResponseBytes: Int?
    /// The `Accept` header (default `application/json`).
    ///
    /// ```swift
    /// .init(accept: "application/zip")
    /// ```
    public var accept: String?
    /// The `Content-Type` of the body instead of the body's own.
    ///
    /// ```swift
    /// .init(contentType: "application/merge-patch+json")
    /// ```
    public var contentType: String?
    /// Extra headers. `Authorization` and `Profirest-Staff-Token` are set through `auth` and `staff` only.
    ///
    /// ```swift
    /// .init(headers: ["X-Trace": traceID])
    /// ```
    public var headers: [String: String]
    /// The `Authorization`: `.auto`, `.none` or `.bearer(…)`.
    ///
    /// ```swift
    /// .init(auth: .none)
    /// ```
    public var auth: Auth

    /// Options for one request; every option left out keeps the client's behaviour.
    ///
    /// - Parameters:
    ///   - query: query parameters; empty values are left out, lists joined with commas.
    ///   - idempotencyKey: the Idempotency-Key: `.auto` (a new one for each POST), `.none`, or your own.
    ///   - ifMatch: `If-Match`, such as the ETag of a read, so the change applies only to that version.
    ///   - ifNoneMatch: `If-None-Match`; a 304 then returns with status 304 and no body.
    ///   - staff: whether the signed-in employee's token goes along: `.auto`, `.required`, `.none` or `.token(…)`.
    ///   - retries: retries for this request; nil keeps the client's `retries`.
    ///   - timeout: the limit of one attempt in seconds, body included; nil keeps the client's `timeout`.
    ///   - accept: the `Accept` header; nil sends `application/json`.
    ///   - contentType: the body's `Content-Type` instead of its own; nil keeps the body's.
    ///   - headers: extra headers; `Authorization` and `Profirest-Staff-Token` go through `auth` and `staff` only.
    ///   - auth: the `Authorization`: `.auto`, `.none` for a public endpoint, or `.bearer(…)` for another token.
    ///   - maxResponseBytes: the most bytes the answer's body may have; nil keeps the client's `maxResponseBytes`.
    ///
    /// ```swift
    /// RequestOptions(query: ["channel": "pos"], staff: .required)
    /// ```
    public init(
        query: [String: QueryValue] = [:], idempotencyKey: IdempotencyKey = .auto, ifMatch: String? = nil,
        ifNoneMatch: String? = nil, staff: Staff = .auto, retries: Int? = nil, timeout: TimeInterval? = nil,
        accept: String? = nil, contentType: String? = nil, headers: [String: String] = [:], auth: Auth = .auto,
        maxResponseBytes: Int? = nil
    ) {
        self.query = query
        self.idempotencyKey = idempotencyKey
        self.ifMatch = ifMatch
        self.ifNoneMatch = ifNoneMatch
        self.staff = staff
        self.retries = retries
        self.timeout = timeout
        self.accept = accept
        self.contentType = contentType
        self.headers = headers
        self.auth = auth
        self.maxResponseBytes = maxResponseBytes
    }
}

extension RequestOptions {
    /// Whether and which `Idempotency-Key` a request carries, chosen once per call so that every automatic retry
    /// repeats it.
    ///
    /// ```swift
    /// try await api.post(path, body: order, options: .init(idempotencyKey: .key("order-\(localID)")))
    /// ```
    public enum IdempotencyKey: Sendable, Hashable, ExpressibleByStringLiteral {
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
        /// let option: RequestOptions.IdempotencyKey = "order-42"
        /// ```
        public init(stringLiteral value: String) { self = .key(value) }
    }
}

extension RequestOptions {
    /// Whether a request carries the signed-in employee's `Profirest-Staff-Token`.
    ///
    /// ```swift
    /// try await api.post("/restaurants/\(rid)/receipts", body: receipt, options: .init(staff: .required))
    /// ```
    public enum Staff: Sendable, Hashable {
        /// Send it when an employee is signed in (the default).
        case auto
        /// Require a signed-in employee: without one the call fails with `staff_session_required` and nothing is sent.
        case required
        /// Never send it.
        case none
        /// Send this staff token.
        case token(String)
    }
}

extension RequestOptions {
    /// Which `Authorization` a request carries.
    ///
    /// ```swift
    /// let metadata: JSONValue = try await api.get("/.well-known/oauth-authorization-server", options: .init(auth: .none))
    /// ```
    public enum Auth: Sendable, Hashable {
        /// The connection's access token, when there is one (the default).
        case auto
        /// No `Authorization` header.
        case none
        /// This bearer token instead of the connection's; never refreshed.
        case bearer(String)
    }
}

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
            ("timeout", timeout as Any), ("maxResponseBytes", maxResponseBytes as Any), ("accept", accept as Any), ("contentType", contentType as Any),
            ("headers", RedactedFields.headersValue(headers)), ("auth", auth),
        ]
    }
}

extension RequestOptions.Auth: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
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

extension RequestOptions.Staff: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
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
