import Foundation

extension RequestPipeline {
    /// How the server answered a stream request: the stream itself, or an error answer read whole.
    enum StreamOpening: Sendable {
        case open(HTTPStreamingResponse)
        case answered(HTTPResponse)
    }

    /// The most of an error answer's body that is read; problem documents are far smaller.
    static let errorBodyLimit = 64 * 1024

    /// Opens a streamed response (the event stream) with the same origin guard, token headers, error decoding
    /// and one refresh after `401 invalid_token` as `execute`, but without retries: what a failed stream means is
    /// its reader's decision (the event feed polls instead on 503).
    ///
    /// `timeout` (the option) bounds the wait for the head, and for the body of an error answer. The transport
    /// gets `idleTimeout` as the request's timeout instead: a transport may treat it as an idle limit (URLSession
    /// does), and a quiet but healthy stream must not end before its reader's own idle limit.
    func stream(_ request: OutgoingRequest, options: RequestOptions, idleTimeout: TimeInterval) async throws
        -> HTTPStreamingResponse
    {
        guard let streaming = transport as? any StreamingHTTPTransport else {
            throw ProfirestUsageError(
                "the transport \(type(of: transport)) cannot read a response in pieces; implement StreamingHTTPTransport")
        }
        let timeout = options.timeout ?? settings.timeout
        let staff = try admit(request, options: options)
        var renewal = TokenRenewal()
        while true {
            try Task.checkCancellation()
            let attempt = try await authorize(request, headers: request.headers, options: options, staff: staff, renewal: &renewal)
            let httpRequest = HTTPRequest(
                method: request.method, url: request.target.url, headers: attempt.headers, body: request.body,
                timeout: max(timeout, idleTimeout))
            let failed: ProfirestAPIError
            do {
                // Always raced against the deadline: URLSessionTransport bounds whole exchanges, not a stream's head.
                let opening = try await AttemptDeadline.run(timeout: timeout, timer: settings.attemptTimer) {
                    try await Self.open(httpRequest, on: streaming)
                }
                switch opening {
                case .open(let head):
                    _ = try failure(of: HTTPResponse(status: head.status, headers: head.headers), attempt: attempt)
                    return head
                case .answered(let response):
                    failed = try failure(of: response, attempt: attempt)
                        ?? errors(attempt).make(
                            ErrorCode.invalidResponse, status: response.status,
                            detail: "HTTP \(response.status) instead of a stream",
                            requestID: response.header("Profirest-Request-Id"))
                }
            } catch {
                failed = try failure(of: error, attempt: attempt, timeout: timeout)
            }
            if try await renew(after: failed, attempt: attempt, options: options, renewal: &renewal) { continue }
            throw failed
        }
    }

    private static func open(_ request: HTTPRequest, on transport: any StreamingHTTPTransport) async throws -> StreamOpening {
        let head = try await transport.stream(request)
        if (200..<300).contains(head.status) { return .open(head) }
        // An error answer is a small problem document: read it whole to learn its catalog code.
        var body = Data()
        for try await chunk in head.body {
            body.append(chunk)
            if body.count > errorBodyLimit {
                // What is left is not read: the connection must not go on delivering it.
                await head.body.close()
                break
            }
        }
        return .answered(HTTPResponse(status: head.status, headers: head.headers, body: body))
    }
}
