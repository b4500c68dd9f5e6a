import Foundation

/// Turns what went wrong (an error response, no answer, an undecodable body) into a `ProfirestAPIError`.
struct ErrorFactory: Sendable {
    var language: String?
    var redaction: Redaction

    /// A library-made error: title from the catalog in the chosen language.
    func make(_ code: String, status: Int? = nil, detail: String?, requestID: String? = nil, retryAfter: Int? = nil) -> ProfirestAPIError {
        let entry = ErrorCatalog.entry(for: code)
        return ProfirestAPIError(
            code: code, status: status ?? entry?.status ?? 0, title: StatusFallback.title(code, language: language),
            detail: detail.map(redaction.scrub), retryAfter: retryAfter, retryable: entry?.retryable ?? false,
            requestID: requestID.map(redaction.scrub))
    }

    /// An error response (4xx/5xx): the problem+json when the body is one, otherwise a code from the status.
    func fromResponse(_ response: APIResponse, now: Date) -> ProfirestAPIError {
        // Everything the server sent is scrubbed, the code and the headers too: a server (or a proxy) that echoes
        // the request may put a token anywhere, and an error ends up in logs.
        let requestID = response.header("Profirest-Request-Id").map(redaction.scrub)
        if let proxy = ProxyChallenge(response) { return proxyLogin(proxy, status: response.status, requestID: requestID) }
        let headerRetryAfter = RetryAfter.seconds(response.header("Retry-After"), now: now)
        if let problem = Self.problem(in: response), let rawCode = problem["code"]?.stringValue, !rawCode.isEmpty {
            let code = redaction.scrub(rawCode)
            let scrubbed = redaction.scrub(problem)
            return ProfirestAPIError(
                code: code, status: response.status,
                title: scrubbed["title"]?.stringValue ?? StatusFallback.title(code, language: language),
                detail: scrubbed["detail"]?.stringValue,
                errors: scrubbed["errors"]?.arrayValue ?? [],
                candidates: scrubbed["candidates"]?.arrayValue ?? [],
                existingID: scrubbed["existing_id"]?.stringValue,
                retryAfter: headerRetryAfter ?? problem["retry_after"]?.intValue,
                retryable: ProfirestAPIError.isRetryable(code: code, status: response.status),
                requestID: scrubbed["request_id"]?.stringValue ?? requestID,
                problem: scrubbed)
        }
        let code = StatusFallback.code(forStatus: response.status)
        let contentType = response.header("Content-Type") ?? "no content type"
        let what = response.data.isEmpty ? "an empty body" : "a \(contentType) body of \(response.data.count) bytes"
        return ProfirestAPIError(
            code: code, status: response.status, title: StatusFallback.title(code, language: language),
            detail: redaction.scrub("HTTP \(response.status) with \(what) instead of application/problem+json"),
            retryAfter: headerRetryAfter, retryable: ProfirestAPIError.isRetryable(code: code, status: response.status),
            requestID: requestID)
    }

    /// A proxy's or gateway's own login (see `ProxyChallenge`): never a reason to refresh.
    func proxyLogin(_ proxy: ProxyChallenge, status: Int, requestID: String? = nil) -> ProfirestAPIError {
        make(
            ErrorCode.proxyAuthenticationRequired, status: status,
            detail: "HTTP \(status) with a \(proxy.summary) challenge: a proxy or gateway between the app and the API wants its "
                + "own login (not the API's token; nothing was refreshed) — configure the proxy to let the API through, or "
                + "use a network without it",
            requestID: requestID)
    }

    /// A 3xx other than 304: never followed, never retried; the Location goes into the detail.
    func redirect(_ response: APIResponse) -> ProfirestAPIError {
        let location = response.header("Location").map { "Location: \(Origin.redactingUserInfo($0))" } ?? "no Location header"
        return make(
            ErrorCode.unexpectedRedirect, status: response.status,
            detail: "HTTP \(response.status), \(location); the library does not follow redirects so tokens stay with the API",
            requestID: response.header("Profirest-Request-Id"))
    }

    /// A failure without an answer from the transport; the transport's error stays with it as its cause.
    func fromTransport(_ error: Error) -> ProfirestAPIError {
        var made = classify(error)
        made.underlyingError = error
        return made
    }

    private func classify(_ error: Error) -> ProfirestAPIError {
        if let urlError = error as? URLError {
            switch urlError.code {
            case .timedOut:
                return make(ErrorCode.timeout, detail: "the transport timed out (\(urlError.code.rawValue))")
            case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateHasBadDate,
                 .serverCertificateNotYetValid:
                return make(
                    ErrorCode.certificateUntrusted,
                    detail: "\(Self.reason(urlError)); \(Self.howToTrust)")
            case .cannotParseResponse:
                return make(ErrorCode.invalidResponse, detail: "the answer is not HTTP as the API speaks it: \(Self.reason(urlError))")
            default:
                break
            }
        }
        let reason: String
        if let urlError = error as? URLError {
            reason = Self.reason(urlError)
        } else {
            reason = String(describing: type(of: error))
        }
        return make(ErrorCode.networkError, detail: reason)
    }

    private static func reason(_ error: URLError) -> String {
        "URLError \(error.code.rawValue): \(error.localizedDescription)"
    }

    /// What to do about a certificate the transport does not trust, on the platform this runs on.
    static var howToTrust: String {
        #if os(Linux)
        return "if the server's certificate comes from a private CA, pass it as "
            + "ProfirestApi.Options(trustedCertificates: .pemFile(\"ca.pem\")) or add it to the system store "
            + "(/usr/local/share/ca-certificates, then update-ca-certificates)"
        #elseif os(Windows)
        return "if the server's certificate comes from a private CA, add it to the Windows certificate store "
            + "(Trusted Root Certification Authorities)"
        #else
        return "if the server's certificate comes from a private CA, pass it as "
            + "ProfirestApi.Options(trustedCertificates: .pemFile(\"ca.pem\")) or install and trust its profile on the device"
        #endif
    }

    static func problem(in response: APIResponse) -> JSONValue? {
        guard !response.data.isEmpty, let type = response.header("Content-Type")?.lowercased(), type.contains("json") else {
            return nil
        }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: response.data), value.objectValue != nil else {
            return nil
        }
        return value
    }
}

/// Keeps tokens, secrets and PINs out of errors: a server may echo a request back in a problem body, and an
/// error tends to end up in logs and crash reports.
struct Redaction: Sendable {
    /// Exact values known to be secret for this request (the access token, the staff token).
    var secrets: [String]

    static let placeholder = "[redacted]"

    /// Member names whose values are blanked wherever they occur in a problem body.
    static let secretKeys: Set<String> = [
        "secret", "pin", "password", "token", "access_token", "refresh_token", "client_secret", "device_code",
        "code_verifier", "authorization", "staff_token",
    ]

    func scrub(_ text: String) -> String {
        var text = text
        // Short values would blank ordinary words; real tokens are long, and PINs only ever sit under secret keys.
        for secret in secrets where secret.count >= 8 && text.contains(secret) {
            text = text.replacingOccurrences(of: secret, with: Self.placeholder)
        }
        return text
    }

    func scrub(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let s): return .string(scrub(s))
        case .array(let items): return .array(items.map(scrub))
        case .object(let members):
            var out: [String: JSONValue] = [:]
            for (key, member) in members {
                // The member name too: a server may echo a token as a key (e.g. in a field-error map).
                out[scrub(key)] = Self.secretKeys.contains(key.lowercased()) ? .string(Self.placeholder) : scrub(member)
            }
            return .object(out)
        default: return value
        }
    }
}

/// Codes and titles for errors without a problem+json body to read them from, taken from the generated catalog.
enum StatusFallback {
    /// The code an error status means when the body says nothing; `http_error` where a status is ambiguous
    /// (a 403 or 409 without a code could be any of several catalog codes).
    static func code(forStatus status: Int) -> String {
        switch status {
        case 400: return ErrorCode.badRequest
        case 401: return ErrorCode.invalidToken
        case 404: return ErrorCode.notFound
        case 405: return ErrorCode.methodNotAllowed
        case 406: return ErrorCode.notAcceptable
        case 412: return ErrorCode.preconditionFailed
        case 413: return ErrorCode.payloadTooLarge
        case 415: return ErrorCode.unsupportedMediaType
        case 428: return ErrorCode.preconditionRequired
        case 429: return ErrorCode.rateLimited
        case 500: return ErrorCode.internalError
        case 502: return ErrorCode.badGateway
        case 503: return ErrorCode.serviceUnavailable
        case 504: return ErrorCode.gatewayTimeout
        default: return ErrorCode.httpError
        }
    }

    /// The catalog title in the client's language: English for `en…`, Czech otherwise (also with no language,
    /// which is what the server does without Accept-Language).
    static func title(_ code: String, language: String?) -> String {
        guard let entry = ErrorCatalog.entry(for: code) else { return code }
        return language?.lowercased().hasPrefix("en") == true ? entry.titleEN : entry.titleCS
    }
}

/// Reads a Retry-After header (RFC 9110 §10.2.3): delta-seconds, or an HTTP date in any of its three forms.
enum RetryAfter {
    /// Whole seconds to wait from `now`, rounded up; 0 for a date in the past; nil when absent or unreadable.
    static func seconds(_ value: String?, now: Date) -> Int? {
        guard let raw = value?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
        if raw.allSatisfy(\.isASCII) && raw.allSatisfy(\.isNumber) {
            return Int(raw) ?? Int.max
        }
        guard let date = httpDate(raw, now: now) else { return nil }
        let delta = date.timeIntervalSince(now).rounded(.up)
        // A date the parser took from garbage can lie absurdly far ahead; Int(_:) would trap beyond Int.max.
        guard delta.isFinite else { return nil }
        return delta <= 0 ? 0 : (delta < Double(Int.max) ? Int(delta) : Int.max)
    }

    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`)
    /// and asctime (`Sun Nov  6 08:49:37 1994`), all in GMT.
    ///
    /// Parsed by hand rather than with DateFormatter: on Linux, DateFormatter traps on some input (a header
    /// with combining marks took a fuzzed client down), and a header is whatever a server or proxy sent.
    static func httpDate(_ text: String, now: Date) -> Date? {
        guard text.utf8.count <= 64 else { return nil }
        // asctime pads a one-digit day with a space ("Nov  6"): empty pieces are dropped.
        let parts = text.split(separator: " ").map(String.init)
        let year: Int?, month: String, day: String, time: String
        switch parts.count {
        case 6 where parts[0].hasSuffix(",") && parts[5] == "GMT":  // IMF-fixdate
            (day, month, year, time) = (parts[1], parts[2], fixedDigits(parts[3], 4), parts[4])
        case 4 where parts[0].hasSuffix(",") && parts[3] == "GMT":  // RFC 850
            let pieces = parts[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard pieces.count == 3, let short = fixedDigits(pieces[2], 2) else { return nil }
            (day, month, year, time) = (pieces[0], pieces[1], fullYear(short, now: now), parts[2])
        case 5:  // asctime
            (month, day, time, year) = (parts[1], parts[2], parts[3], fixedDigits(parts[4], 4))
        default:
            return nil
        }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false).map { fixedDigits(String($0), 2) }
        guard let year, let monthNumber = months.firstIndex(of: month).map({ $0 + 1 }),
            (1...2).contains(day.utf8.count), let dayNumber = Int(day), day.utf8.allSatisfy({ (48...57).contains($0) }),
            clock.count == 3, let hour = clock[0], let minute = clock[1], let second = clock[2]
        else { return nil }
        // The calendar rules (days of the month, ranges of the clock) are RFC 3339's, so that parser checks them.
        let stamp = String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", year, monthNumber, dayNumber, hour, minute, second)
        return RFC3339.date(from: stamp)
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Exactly `count` ASCII digits as a number, else nil.
    private static func fixedDigits(_ text: String, _ count: Int) -> Int? {
        guard text.utf8.count == count, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(text)
    }

    /// RFC 850's two-digit year: RFC 9110 reads it as the most recent year with those digits that is no more than
    /// 50 years ahead of now.
    private static func fullYear(_ short: Int, now: Date) -> Int {
        let current = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "GMT")!, from: now).year ?? 2000
        var year = current - current % 100 + short
        if year > current + 50 { year -= 100 }
        return year
    }
}

/// Adds to a `403 insufficient_scope` the scope the call needs, from the contract's operations, so a new app learns
/// what to ask for in `pair(scope:)` from the first refusal rather than by trial.
enum ScopeHint {
    /// `error` with a sentence naming the missing scopes appended to its detail; unchanged for any other error, or
    /// when the call is no operation of the contract.
    static func annotated(_ error: ProfirestAPIError, method: String, url: URL) -> ProfirestAPIError {
        guard error.code == ErrorCode.insufficientScope, let scopes = scopes(method: method, url: url), !scopes.isEmpty else {
            return error
        }
        var annotated = error
        let names = scopes.map { "`\($0)`" }.joined(separator: " and ")
        let hint = "This call needs the scope \(names): add it to pair(scope:) (or to the consent's scope) and pair again."
        annotated.detail = [error.detail, hint].compactMap { $0 }.joined(separator: " ")
        return annotated
    }

    /// The scopes of the contract's operation that `method` and `url` (an API URL under `/v2`) call.
    static func scopes(method: String, url: URL) -> [String]? {
        guard let range = url.path.range(of: "/v2/") else { return nil }
        let segments = url.path[range.upperBound...].split(separator: "/")
        // The matching template with the most literal segments: `…/punches/batch` before `…/punches/{id}`.
        var best: (literals: Int, scopes: [String])?
        for operation in Operations.all where operation.method == method && !operation.isRoot {
            let template = operation.path.split(separator: "/")
            guard template.count == segments.count,
                zip(template, segments).allSatisfy({ pattern, segment in pattern.hasPrefix("{") || pattern == segment })
            else { continue }
            let literals = template.filter { !$0.hasPrefix("{") }.count
            if literals > best?.literals ?? -1 { best = (literals, operation.scopes) }
        }
        return best?.scopes
    }
}

/// Tells a proxy's login from the API's: a 407, or a 401 without the API's problem document whose challenge is not
/// `Bearer`, comes from something in front of the API (a corporate proxy, a gateway with `auth_basic`) and must never
/// be taken for a rejected token — a refresh would spend a refresh token for nothing and the next call would meet the
/// same login again. A 401 that carries the API's problem document is the API's answer whatever its challenge says,
/// and keeps its code (`invalid_token` renews the token once).
struct ProxyChallenge: Sendable, Hashable {
    /// The authentication scheme asked for: `Basic`, `Digest`, `Negotiate`…
    var scheme: String
    /// The challenge's realm, if it names one.
    var realm: String?

    /// The proxy's challenge in `response`, or nil when the answer is the API's own (no challenge, or a Bearer one).
    init?(_ response: APIResponse) {
        let header = response.status == 407 ? "Proxy-Authenticate" : "WWW-Authenticate"
        guard response.status == 407 || response.status == 401 else { return nil }
        guard let value = response.header(header), let first = Self.challenges(value).first else {
            // A 407 is a proxy's whatever it says; a 401 without a challenge is left to its body.
            if response.status == 407 { self.init(scheme: "unknown", realm: nil) } else { return nil }
            return
        }
        if response.status == 401, Self.challenges(value).contains(where: { $0.scheme.lowercased() == "bearer" }) { return nil }
        // The body before the challenge: a server or gateway may add a challenge of its own to the API's 401.
        if response.status == 401, Self.carriesAPIProblem(response) { return nil }
        self.init(scheme: first.scheme, realm: first.realm)
    }

    /// True when the body is the API's problem document: JSON with a `code`, which a proxy's login page never has.
    static func carriesAPIProblem(_ response: APIResponse) -> Bool {
        guard let code = ErrorFactory.problem(in: response)?["code"]?.stringValue else { return false }
        return !code.isEmpty
    }

    init(scheme: String, realm: String?) {
        self.scheme = scheme
        self.realm = realm
    }

    /// The schemes and realms of a challenge header (RFC 9110 11.6.1), e.g. `Basic realm="corp", Negotiate`.
    static func challenges(_ header: String) -> [ProxyChallenge] {
        var found: [ProxyChallenge] = []
        // A new challenge starts with a token not followed by `=` (an auth-param is `name=value`).
        let pattern = #"(?:^|,)\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)(?=\s+[^=,\s]|\s*,|\s*$)"#
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        let text = header as NSString
        let matches = regex.matches(in: header, range: NSRange(location: 0, length: text.length))
        for (index, match) in matches.enumerated() {
            let scheme = text.substring(with: match.range(at: 1))
            let end = index + 1 < matches.count ? matches[index + 1].range.location : text.length
            let params = text.substring(with: NSRange(location: match.range.upperBound, length: end - match.range.upperBound))
            found.append(ProxyChallenge(scheme: scheme, realm: realm(in: params)))
        }
        return found
    }

    private static func realm(in params: String) -> String? {
        guard let range = params.range(of: #"realm\s*=\s*("([^"\\]|\\.)*"|[^,\s]*)"#, options: [.regularExpression, .caseInsensitive])
        else { return nil }
        var value = String(params[range])
        value = String(value[value.index(after: value.firstIndex(of: "=")!)...]).trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
        return value.replacingOccurrences(of: "\\\"", with: "\"")
    }

    /// How the error's detail names it: `Basic realm "corp"`.
    var summary: String { realm.map { "\(scheme) realm \"\($0)\"" } ?? scheme }
}
