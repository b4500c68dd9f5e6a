import Foundation

/// Every failed API call: the catalog `code` to decide by, the text for a person, and the details the server sent.
///
/// Decide by ``code`` (constants in ``ErrorCode``), never by ``status`` or ``title``. ``status`` is 0 when no answer
/// came (`network_error`, `timeout`). The description never contains a token, secret or PIN.
///
/// ```swift
/// catch let e as ProfirestAPIError where e.code == ErrorCode.staffLocked { show(e.retryAfter) }
/// ```
public struct ProfirestAPIError: Error, Sendable, Hashable {
    /// The catalog code, e.g. `staff_ambiguous`. Usage: `if e.code == ErrorCode.validationFailed { … }`
    public var code: String
    /// The HTTP status; 0 when no answer came. Usage: `e.status == 409`
    public var status: Int
    /// Short text for a person, Czech or English by the `language` option. Usage: `label.text = e.title`
    public var title: String
    /// Text about this occurrence, if any. Usage: `e.detail ?? ""`
    public var detail: String?
    /// Field errors with `validation_failed`: objects with `pointer`, `code`, `message`.
    /// Usage: `for f in e.errors { print(f["pointer"]?.stringValue ?? "") }`
    public var errors: [JSONValue]
    /// The people to choose from with `staff_ambiguous`: objects with `id`, `name`, `role`.
    /// Usage: `e.candidates.first?["name"]?.stringValue`
    public var candidates: [JSONValue]
    /// The existing object with `quote_already_used`, `external_id_conflict`, `customer_email_taken`.
    /// Usage: `let orderID = e.existingID`
    public var existingID: String?
    /// Seconds from Retry-After (or the problem's `retry_after`). Usage: `e.retryAfter.map(String.init) ?? "?"`
    public var retryAfter: Int?
    /// Whether the library retries this kind of error automatically (it already did, as far as allowed).
    /// Usage: `if e.retryable { offerRetry() }`
    public var retryable: Bool
    /// The request id for support (`Profirest-Request-Id`). Usage: `log(e.requestID ?? "")`
    public var requestID: String?
    /// The whole problem+json body, with secret-looking members blanked. Usage: `e.problem?["code"]`
    public var problem: JSONValue?

    /// `title – detail`, or the title alone. Usage: `print(e.message)`
    public var message: String {
        guard let detail, !detail.isEmpty else { return title }
        return "\(title) – \(detail)"
    }

    /// The problem body as the generated `Problem` model; nil when the body was not a complete problem.
    /// Usage: `e.problemModel?.requestId`
    public var problemModel: Problem? {
        guard let problem else { return nil }
        return try? problem.decode(as: Problem.self)
    }

    /// Usage: `ProfirestAPIError(code: ErrorCode.timeout, status: 0, title: "No answer in time")`
    public init(
        code: String, status: Int, title: String, detail: String? = nil, errors: [JSONValue] = [],
        candidates: [JSONValue] = [], existingID: String? = nil, retryAfter: Int? = nil, retryable: Bool = false,
        requestID: String? = nil, problem: JSONValue? = nil
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
    }
}

extension ProfirestAPIError: CustomStringConvertible, CustomDebugStringConvertible, LocalizedError {
    /// `code (status): message [request id]`. Usage: `print(error)`
    public var description: String {
        var text = "\(code) (\(status)): \(message)"
        if let requestID { text += " [\(requestID)]" }
        return text
    }

    /// The description plus the retry facts. Usage: `debugPrint(error)`
    public var debugDescription: String {
        var text = "ProfirestAPIError(\(description), retryable: \(retryable)"
        if let retryAfter { text += ", retryAfter: \(retryAfter)" }
        if let existingID { text += ", existingID: \(existingID)" }
        if !errors.isEmpty { text += ", errors: \(errors.count)" }
        if !candidates.isEmpty { text += ", candidates: \(candidates.count)" }
        return text + ")"
    }

    /// The message, for `localizedDescription`. Usage: `error.localizedDescription`
    public var errorDescription: String? { message }
}
