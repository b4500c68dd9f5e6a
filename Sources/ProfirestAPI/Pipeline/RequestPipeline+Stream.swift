import Foundation

extension RequestPipeline {
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
        let timeout = options.timeout ?? settings.timeout
        let staff = try admit(request, options: options)
        var renewal = TokenRenewal()
        while true {
            try Task.checkCancellation()
            let attempt = try await authorize(request, headers: request.headers, options: options, staff: staff, renewal: &renewal)
            let httpRequest = HTTPRequest(
                method: request.method, url: request.target.url, headers: attempt.headers, body: request.body,
                timeout: max(timeout, idleTimeout))
            let exchange = Attempt(
                transport: transport, settings: settings, timeout: timeout,
                accessToken: attempt.sentToken, staffToken: attempt.staff.token)
            let failed: ProfirestAPIError
            switch try await exchange.perform(httpRequest, streamed: true) {
            case .streaming(let head):
                succeeded(attempt)
                return head
            case .succeeded(let response):
                failed = exchange.errors.make(
                    ErrorCode.invalidResponse, status: response.status, detail: "HTTP \(response.status) instead of a stream",
                    requestID: response.header("Profirest-Request-Id"))
            case .failed(let error, _):
                failed = error
            }
            if try await renew(after: failed, attempt: attempt, options: options, renewal: &renewal) { continue }
            throw failed
        }
    }
}
