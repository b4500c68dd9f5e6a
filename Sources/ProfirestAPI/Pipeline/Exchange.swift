import Foundation

/// One exchange with the server, the only place the library calls a transport: ordinary requests, the event
/// stream and the OAuth endpoints all go through `perform`, so a deadline, a transport failure and a status mean
/// the same everywhere.
///
/// What happens around an attempt — which tokens it carries, whether a failure is retried or renews a token — is
/// its caller's business: `Core.send`, by the call's `SendPolicy`.
struct Exchange: Sendable {
    /// What an attempt ended with, when it ended with something to decide on.
    enum Outcome: Sendable {
        /// A 2xx (or 304) answer, read whole.
        case succeeded(APIResponse)
        /// The 2xx head of a streamed answer; its body is still arriving.
        case streaming(HTTPStreamingResponse)
        /// An error answer (kept for callers that read it their own way, as OAuth does) or no answer at all.
        case failed(ProfirestAPIError, answer: APIResponse?)
    }

    let core: Core
    /// Limits the whole attempt (or, for a stream, the wait for its head and for an error answer's body).
    let timeout: TimeInterval
    /// What the attempt carries that no error may show: its access and staff tokens, an OAuth form's secrets.
    var secrets: [String] = []

    /// Scrubs the attempt's secrets from every error it makes. Made when something failed: a success allocates
    /// nothing for errors.
    var errors: ErrorFactory { core.errors(scrubbing: secrets) }

    /// Sends `request` under the deadline and classifies the answer. Throws only what no retry can change: a
    /// cancellation, a redirect (`unexpected_redirect`: tokens are never sent after one), an error the library
    /// already made, or a usage error of a streamed request over a transport that cannot stream.
    func perform(_ request: HTTPRequest, streamed: Bool = false) async throws -> Outcome {
        var streaming: (any StreamingHTTPTransport)?
        if streamed {
            guard let transport = core.transport as? any StreamingHTTPTransport else {
                throw ProfirestUsageError(
                    "the transport \(type(of: core.transport)) cannot read a response in pieces; implement StreamingHTTPTransport")
            }
            streaming = transport
        }
        let answer: Answer
        do {
            answer = try await exchange(request, streaming: streaming)
        } catch {
            return .failed(try failure(of: error), answer: nil)
        }
        switch answer {
        case .stream(let head):
            core.noteServerTime(head.headers)
            return .streaming(head)
        case .whole(let response):
            let deviceNow = core.noteServerTime(response.headers)
            if let limit = request.maxResponseBytes, response.data.count > limit {
                // A transport of the app's own that read it all anyway: still not handed on.
                return .failed(tooLarge(limit), answer: nil)
            }
            switch response.status {
            case 200..<300, 304:
                return .succeeded(response)
            case 300..<400:
                throw errors.redirect(response)
            default:
                // A Retry-After date is counted from the answer's own Date: the device's clock may be hours off.
                let now = ServerClock.date(in: response.headers, deviceNow: deviceNow) ?? deviceNow
                return .failed(errors.fromResponse(response, now: now), answer: response)
            }
        }
    }

    private enum Answer: Sendable {
        case whole(APIResponse)
        case stream(HTTPStreamingResponse)
    }

    /// The most of an error answer's body that is read from a stream; problem documents are far smaller.
    static let errorBodyLimit = 64 * 1024

    private func exchange(_ request: HTTPRequest, streaming: (any StreamingHTTPTransport)?) async throws -> Answer {
        if let streaming {
            // Always raced against the deadline: URLSessionTransport bounds whole exchanges, not a stream's head.
            return try await AttemptDeadline.run(timeout: timeout, timer: core.attemptTimer) {
                try await Self.open(request, on: streaming)
            }
        }
        // A transport that bounds each exchange itself is called directly: the race costs two child tasks and a
        // sleeping timer per attempt, measurable at 64 requests in flight.
        let transport = core.transport
        if transport is BoundsEachAttempt { return .whole(try await transport.send(request)) }
        return try await AttemptDeadline.run(timeout: timeout, timer: core.attemptTimer) {
            .whole(try await transport.send(request))
        }
    }

    private static func open(_ request: HTTPRequest, on transport: any StreamingHTTPTransport) async throws -> Answer {
        let head = try await transport.stream(request)
        if (200..<300).contains(head.status) { return .stream(head) }
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
        return .whole(APIResponse(status: head.status, headers: head.headers, data: body))
    }

    private func tooLarge(_ limit: Int) -> ProfirestAPIError {
        errors.make(
            ErrorCode.responseTooLarge,
            detail: "the answer is longer than \(limit) bytes (maxResponseBytes); raise it for this request if it is a download")
    }

    /// A failure without an answer as the error to handle: `timeout`, `network_error`, `certificate_untrusted` or
    /// `invalid_response`. A cancellation, an error the library already made, or a usage error (a transport that
    /// cannot be made as the options ask) goes to the caller as it is.
    private func failure(of error: Error) throws -> ProfirestAPIError {
        if let error = error as? ProfirestAPIError { throw error }
        if let error = error as? ProfirestUsageError { throw error }
        if Task.isCancelled || error is CancellationError { throw CancellationError() }
        if let tooLarge = error as? ResponseTooLarge { return self.tooLarge(tooLarge.limit) }
        return error is AttemptDeadline.Expired
            ? errors.make(ErrorCode.timeout, detail: "no complete answer within \(timeout) s (one attempt, body included)")
            : errors.fromTransport(error)
    }
}

/// Bounds one attempt, body included. `URLRequest.timeoutInterval` is only an idle timeout, and a Linux
/// URLSession task on a connection the server closed can spin until it fires; racing the transport against a
/// timer ends the attempt on time whatever the transport does (the transport is then cancelled).
///
/// A transport that bounds the whole exchange by `HTTPRequest.timeout` itself (`BoundsEachAttempt`, i.e.
/// `URLSessionTransport`, with a dispatch timer) is called directly: the race costs two child tasks and a sleeping
/// timer per attempt, measurable at 64 requests in flight.
enum AttemptDeadline {
    struct Expired: Error {}

    static func run<Answer: Sendable>(
        timeout: TimeInterval, timer: @escaping @Sendable (TimeInterval) async throws -> Void,
        _ operation: @escaping @Sendable () async throws -> Answer
    ) async throws -> Answer {
        try await withThrowingTaskGroup(of: Answer?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await timer(timeout)
                return nil
            }
            defer { group.cancelAll() }
            // The first child to finish decides; the other is cancelled when the group is left.
            guard let first = try await group.next(), let answer = first else { throw Expired() }
            return answer
        }
    }
}
