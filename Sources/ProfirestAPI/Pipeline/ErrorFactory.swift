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
                retryable: RetryPolicy.isRetryable(code: code, status: response.status),
                requestID: scrubbed["request_id"]?.stringValue ?? requestID,
                problem: scrubbed)
        }
        let code = StatusFallback.code(forStatus: response.status)
        let contentType = response.header("Content-Type") ?? "no content type"
        let what = response.data.isEmpty ? "an empty body" : "a \(contentType) body of \(response.data.count) bytes"
        return ProfirestAPIError(
            code: code, status: response.status, title: StatusFallback.title(code, language: language),
            detail: redaction.scrub("HTTP \(response.status) with \(what) instead of application/problem+json"),
            retryAfter: headerRetryAfter, retryable: RetryPolicy.isRetryable(code: code, status: response.status),
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
        let location = response.header("Location").map { "Location: \($0)" } ?? "no Location header"
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
