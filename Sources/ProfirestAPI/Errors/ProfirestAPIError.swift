import Foundation

/// Why an API call failed — the catalog `code` to decide by, text for a person, and the details the server sent — so
/// that an app can react to each kind of failure without reading statuses or messages.
///
/// Decide by ``code`` (constants in ``ErrorCode``), never by ``status`` or ``title``. ``status`` is 0 when no answer
/// came (`network_error`, `timeout`). The description never contains a token, secret or PIN.
///
/// ```swift
/// catch let e as ProfirestAPIError where e.code == ErrorCode.staffLocked { show(e.retryAfter) }
/// ```
public struct ProfirestAPIError: Error, Sendable, Hashable {
    /// The catalog code that says what went wrong, e.g. `staff_ambiguous`: the one thing to decide by, since a status
    /// carries several codes and titles are translated.
    ///
    /// ```swift
    /// if e.code == ErrorCode.validationFailed { highlight(e.errors) }
    /// ```
    public var code: String
    /// The HTTP status of the answer, or 0 when no answer came (`network_error`, `timeout`); for logs, not decisions.
    public var status: Int
    /// A short text to show a person, in Czech or English by the client's `language` option.
    public var title: String
    /// More about this occurrence for a person (which field, which limit), when the server or library says more.
    public var detail: String?
    /// The fields a `validation_failed` refused, each an object with `pointer`, `code` and `message`, so that a form
    /// can mark them.
    ///
    /// ```swift
    /// for field in e.errors { mark(field["pointer"]?.stringValue, field["message"]?.stringValue) }
    /// ```
    public var errors: [JSONValue]
    /// The people a shared PIN could belong to with `staff_ambiguous`, each with `id`, `name` and `role`, so that the
    /// person can pick themselves and sign in with `employeeId` set.
    ///
    /// ```swift
    /// credential.employeeId = e.candidates[chosen]["id"]?.stringValue
    /// ```
    public var candidates: [JSONValue]
    /// The record that already exists, with the conflicts that name one (`quote_already_used`,
    /// `external_id_conflict`, `customer_email_taken`), so that the app can show it instead of creating another.
    public var existingID: String?
    /// How many seconds to wait before trying again, from `Retry-After` (or the problem's `retry_after`): with
    /// `staff_locked`, or a wait longer than the client's `maxRetryWait`.
    public var retryAfter: Int?
    /// Whether this is a kind of failure the library retries by itself (and already did, as far as the client's
    /// `retries` allow), which tells an app whether offering "Try again" makes sense.
    public var retryable: Bool
    /// The id the server filed the request under (`Profirest-Request-Id`): give it to support.
    public var requestID: String?
    /// The whole problem+json body, with anything that looks secret blanked, for members the library does not
    /// surface as properties.
    public var problem: JSONValue?
    /// What the transport threw when no answer came (`network_error`, `timeout`, `certificate_untrusted`,
    /// `invalid_response` of a reply that is not HTTP): a `URLError` with its code and the transport's reason, for a log
    /// or a decision the catalog code does not make. Nil for every answered request. It never carries a token: the
    /// transports describe the connection, not the request's headers or body. Not part of equality or hashing.
    ///
    /// ```swift
    /// if let urlError = e.underlyingError as? URLError, urlError.code == .notConnectedToInternet { showOffline() }
    /// ```
    public var underlyingError: (any Error)?

    /// The title and the detail in one line, `title – detail` (the title alone without a detail), for a log or an
    /// alert.
    public var message: String {
        guard let detail, !detail.isEmpty else { return title }
        return "\(title) – \(detail)"
    }

    /// The problem body as the generated ``Problem`` model, for typed access to its members; nil when the body was
    /// not a complete problem.
    public var problemModel: Problem? {
        guard let problem else { return nil }
        return try? problem.decode(as: Problem.self)
    }

    /// Makes an error, for a test double or a transport of your own that reports failures as the library does.
    ///
    /// - Parameters:
    ///   - code: the catalog code, one of the ``ErrorCode`` constants.
    ///   - status: the HTTP status, or 0 when no answer came.
    ///   - title: a short text to show a person.
    ///   - detail: more about this occurrence; nil for none.
    ///   - errors: the refused fields of a `validation_failed`, each with `pointer`, `code` and `message`.
    ///   - candidates: the people a shared PIN could belong to, with `staff_ambiguous`.
    ///   - existingID: the record that already exists, with the conflicts that name one.
    ///   - retryAfter: how many seconds to wait before trying again; nil when the answer did not say.
    ///   - retryable: whether this is a failure the library retries by itself.
    ///   - requestID: the id the server filed the request under (`Profirest-Request-Id`).
    ///   - problem: the whole problem+json body, with secrets blanked.
    ///   - underlyingError: what the transport threw when no answer came; nil for an answered request.
    ///
    /// ```swift
    /// ProfirestAPIError(code: ErrorCode.timeout, status: 0, title: "No answer in time", retryable: true)
    /// ```
    public init(
        code: String, status: Int, title: String, detail: String? = nil, errors: [JSONValue] = [],
        candidates: [JSONValue] = [], existingID: String? = nil, retryAfter: Int? = nil, retryable: Bool = false,
        requestID: String? = nil, problem: JSONValue? = nil, underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.status = status
        self.title = title
        self.detail = detail
        self.errors = errors
        self.candidates = candidates
        self.existingID = existingID
        self.retryAfter = retryAfter
        self.retryable = retryable
        self.requestID = requestID
        self.problem = problem
        self.underlyingError = underlyingError
    }

    /// Equal when everything but the underlying error is (an `Error` is neither equatable nor hashable).
    ///
    /// - Parameters:
    ///   - a: an error.
    ///   - b: the error to compare it with.
    /// - Returns: true when every member but ``underlyingError`` is equal.
    public static func == (a: ProfirestAPIError, b: ProfirestAPIError) -> Bool {
        a.code == b.code && a.status == b.status && a.title == b.title && a.detail == b.detail && a.errors == b.errors
            && a.candidates == b.candidates && a.existingID == b.existingID && a.retryAfter == b.retryAfter
            && a.retryable == b.retryable && a.requestID == b.requestID && a.problem == b.problem
    }

    /// Hashes what equality compares.
    ///
    /// - Parameter hasher: the hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(status)
        hasher.combine(title)
        hasher.combine(detail)
        hasher.combine(errors)
        hasher.combine(candidates)
        hasher.combine(existingID)
        hasher.combine(retryAfter)
        hasher.combine(retryable)
        hasher.combine(requestID)
        hasher.combine(problem)
    }
}

extension ProfirestAPIError: CustomStringConvertible, CustomDebugStringConvertible, LocalizedError {
    /// The code, status, message and request id in one line, `code (status): message [request id]`, never with a
    /// token, secret or PIN in it.
    public var description: String {
        var text = "\(code) (\(status)): \(message)"
        if let requestID { text += " [\(requestID)]" }
        return text
    }

    /// The description plus whether and when it may be retried and how many field errors and candidates it carries,
    /// for a debugger.
    public var debugDescription: String {
        var text = "ProfirestAPIError(\(description), retryable: \(retryable)"
        if let retryAfter { text += ", retryAfter: \(retryAfter)" }
        if let existingID { text += ", existingID: \(existingID)" }
        if !errors.isEmpty { text += ", errors: \(errors.count)" }
        if !candidates.isEmpty { text += ", candidates: \(candidates.count)" }
        return text + ")"
    }

    /// The ``message``, so that `localizedDescription` shows a person the same text.
    public var errorDescription: String? { message }
}

extension ProfirestAPIError {
    /// Whether a failure with this code is worth sending again — the library's one retryability rule: the `retryable`
    /// column of the contract's error catalog (generated into `ErrorCatalog`), for every retry the library makes. A
    /// code this library does not know yet is judged by its status: 500, 502, 503 and 504 are retried, nothing else
    /// (by code first: a 429 `staff_locked` is a lock after wrong PINs, and a newer server's 4xx is no reason to retry).
    static func isRetryable(code: String, status: Int) -> Bool {
        if let entry = ErrorCatalog.entry(for: code) { return entry.retryable }
        return [500, 502, 503, 504].contains(status)
    }
}
