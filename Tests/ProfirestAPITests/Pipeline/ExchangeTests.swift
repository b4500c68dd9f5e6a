import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// `Attempt.swift`: one exchange, driven directly — what `perform` returns or throws for each kind of answer, the
/// deadline (`AttemptDeadline`, in virtual time: a `.hang` fires the `ManualTimer`), streamed requests, and the
/// attempt's secrets kept out of its errors. The loop around attempts: CoreTests.
final class ExchangeTests: XCTestCase {
    static let secret = "at_SECRET_attempt_5e2a9c71"

    private func core(_ transport: any HTTPTransport, timer: ManualTimer) throws -> Core {
        Core(
            base: .success(try APIBase(baseURL: "https://api.mujprofirest.cz")), transport: transport,
            store: StateStore(storage: MemoryTokenStorage(), key: "k"), authorizer: TestAuthorizer(token: nil),
            language: "en", clock: { Harness.now }, sleep: { _ in XCTFail("an attempt never sleeps") },
            attemptTimer: { try await timer.wait($0) })
    }

    private let request = HTTPRequest(
        method: "GET", url: URL(string: "https://api.mujprofirest.cz/v2/connection")!,
        headers: ["Authorization": "Bearer \(ExchangeTests.secret)"])

    /// `perform` over `steps` with a 7 s deadline; the transport and the timer to look at afterwards.
    private func perform(
        _ steps: [Step], streamed: Bool = false, secrets: [String] = []
    ) async throws -> (outcome: Exchange.Outcome, transport: ScriptedTransport, timer: ManualTimer) {
        let timer = ManualTimer()
        let transport = ScriptedTransport(steps, timer: timer)
        let attempt = Exchange(core: try core(transport, timer: timer), timeout: 7, secrets: secrets)
        return (try await attempt.perform(request, streamed: streamed), transport, timer)
    }

    func testA2xxOrA304SucceedsWithTheWholeAnswer() async throws {
        for step in [Step.json(200, ["ok": true]), .json(201, ["id": "c1"]), .status(204), .status(304)] {
            let (outcome, transport, timer) = try await perform([step])
            guard case .succeeded(let response) = outcome else { return XCTFail("\(step): \(outcome)") }
            guard case .respond(let sent) = step else { return XCTFail("\(step)") }
            XCTAssertEqual(response, sent)
            XCTAssertEqual(transport.requests, [request], "sent once, as it was")
            XCTAssertEqual(timer.durations, [7], "raced against the attempt's deadline")
        }
    }

    func testA3xxThrowsUnexpectedRedirect() async throws {
        for status in [301, 302, 307, 308] {
            let e = await apiError {
                _ = try await self.perform([.status(status, headers: ["Location": "https://elsewhere.example/login"])])
            }
            XCTAssertEqual(e?.code, ErrorCode.unexpectedRedirect)
            XCTAssertEqual(e?.status, status)
            XCTAssertEqual(e?.retryable, false)
            XCTAssertTrue(e?.detail?.contains("Location: https://elsewhere.example/login") == true, e?.detail ?? "")
        }
    }

    func testAnErrorStatusFailsWithItsAnswer() async throws {
        let (outcome, _, _) = try await perform([.problem(503, ErrorCode.serviceUnavailable, headers: ["Retry-After": "4"])])
        guard case .failed(let error, let answer) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(error.code, ErrorCode.serviceUnavailable)
        XCTAssertEqual(error.status, 503)
        XCTAssertEqual(error.retryAfter, 4)
        XCTAssertTrue(error.retryable)
        XCTAssertEqual(answer?.status, 503)
        XCTAssertEqual(answer?.header("Retry-After"), "4")
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: answer?.data ?? Data())["code"]?.stringValue,
                       ErrorCode.serviceUnavailable, "the answer as it came, for callers that read it their own way")

        let (notFound, _, _) = try await perform([.problem(404, ErrorCode.notFound)])
        guard case .failed(let missing, let missingAnswer) = notFound else { return XCTFail("\(notFound)") }
        XCTAssertEqual(missing.code, ErrorCode.notFound)
        XCTAssertFalse(missing.retryable)
        XCTAssertEqual(missingAnswer?.status, 404)
    }

    func testATransportFailureIsANetworkErrorWithoutAnAnswer() async throws {
        let (outcome, _, _) = try await perform([.fail(URLError(.cannotConnectToHost))])
        guard case .failed(let error, let answer) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(error.code, ErrorCode.networkError)
        XCTAssertEqual(error.status, 0)
        XCTAssertTrue(error.retryable)
        XCTAssertEqual((error.underlyingError as? URLError)?.code, .cannotConnectToHost)
        XCTAssertNil(answer)
    }

    func testTheDeadlineGivesTimeout() async throws {
        let (outcome, transport, timer) = try await perform([.hang])
        guard case .failed(let error, let answer) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(error.code, ErrorCode.timeout)
        XCTAssertEqual(error.status, 0)
        XCTAssertTrue(error.retryable)
        XCTAssertTrue(error.detail?.contains("7") == true, error.detail ?? "")
        XCTAssertNil(answer)
        XCTAssertEqual(timer.durations, [7])
        XCTAssertEqual(transport.requests.count, 1)
    }

    /// A cancellation, an error the library already made and a usage error go to the caller as they are: no retry
    /// could change them.
    func testWhatNoRetryCanChangeIsThrownAsItIs() async throws {
        await assertCancelled { _ = try await self.perform([.fail(CancellationError())]) }
        let made = ProfirestAPIError(code: ErrorCode.notPaired, status: 401, title: "not paired")
        let e = await apiError { _ = try await self.perform([.fail(made)]) }
        XCTAssertEqual(e, made)
        let usage = await usageError { _ = try await self.perform([.fail(ProfirestUsageError("no such thing"))]) }
        XCTAssertEqual(usage?.message, "no such thing")
    }

    /// A transport that bounds each exchange itself (`URLSessionTransport`) is called without the race.
    func testATransportThatBoundsEachAttemptIsCalledWithoutTheTimer() async throws {
        let timer = ManualTimer()
        let transport = ScriptedTransport([ok], timer: timer)
        let attempt = Exchange(core: try core(SelfBounding(base: transport), timer: timer), timeout: 7)
        guard case .succeeded = try await attempt.perform(request) else { return XCTFail("a 200") }
        XCTAssertEqual(timer.durations, [])
        XCTAssertEqual(transport.requests.count, 1)
    }

    // MARK: Streamed requests

    func testAStreamedRequestOverATransportThatCannotStreamIsAUsageError() async throws {
        let timer = ManualTimer()
        let transport = ScriptedTransport([ok], timer: timer)
        let attempt = Exchange(core: try core(transport.withoutStreaming, timer: timer), timeout: 7)
        let e = await usageError { _ = try await attempt.perform(self.request, streamed: true) }
        XCTAssertTrue(e?.message.contains("cannot read a response in pieces") == true, e?.message ?? "")
        XCTAssertEqual(transport.requests.count, 0, "nothing was sent")
        // The same transport answers a request read whole.
        guard case .succeeded = try await attempt.perform(request) else { return XCTFail("a 200") }
    }

    func testAStreamed2xxGivesItsHeadWhileTheBodyArrives() async throws {
        let chunks = [Data("data: a\n\n".utf8), Data("data: b\n\n".utf8)]
        let (outcome, _, timer) = try await perform(
            [.chunks(status: 200, headers: ["Content-Type": "text/event-stream"], chunks: chunks)], streamed: true)
        guard case .streaming(let head) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.headers["Content-Type"], "text/event-stream")
        var read: [Data] = []
        for try await chunk in head.body { read.append(chunk) }
        XCTAssertEqual(read, chunks)
        XCTAssertEqual(timer.durations, [7], "the wait for the head is bounded")
    }

    /// An error answer to a streamed request is read whole (a small problem document) to learn its code — but no
    /// more of it than the limit.
    func testAStreamedErrorAnswerIsReadWholeUpToTheLimit() async throws {
        let problem = try JSONCoding.encode(JSONValue.object(["code": .string(ErrorCode.rateLimited), "title": "Slow down"]))
        let (outcome, _, _) = try await perform(
            [.chunks(status: 429, headers: ["Content-Type": "application/problem+json", "Retry-After": "3"],
                     chunks: [problem.prefix(10), problem.dropFirst(10)])], streamed: true)
        guard case .failed(let error, let answer) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(error.code, ErrorCode.rateLimited)
        XCTAssertEqual(error.retryAfter, 3)
        XCTAssertEqual(answer?.data, problem)

        let piece = Data(repeating: UInt8(ascii: "x"), count: 40 * 1024)
        let (huge, _, _) = try await perform(
            [.chunks(status: 502, headers: ["Content-Type": "text/html"], chunks: [piece, piece, piece, piece])], streamed: true)
        guard case .failed(let gateway, let gatewayAnswer) = huge else { return XCTFail("\(huge)") }
        XCTAssertEqual(gateway.code, ErrorCode.badGateway)
        XCTAssertEqual(gatewayAnswer?.data.count, 2 * piece.count, "read until past the limit, then closed")
        XCTAssertGreaterThan(2 * piece.count, Exchange.errorBodyLimit)
    }

    // MARK: Secrets

    func testAnErrorAnswersSecretsAreScrubbed() async throws {
        let secret = Self.secret
        let (outcome, _, _) = try await perform(
            [.problem(422, ErrorCode.validationFailed, headers: ["Profirest-Request-Id": "req \(secret)"],
                      extra: ["detail": .string("the token \(secret) was echoed"), "request_id": .string("req_\(secret)")])],
            secrets: [secret])
        guard case .failed(let error, _) = outcome else { return XCTFail("\(outcome)") }
        for text in [error.description, error.debugDescription, error.detail ?? "", error.requestID ?? "", "\(error.problem as Any)"] {
            XCTAssertFalse(text.contains(secret), text)
        }
        XCTAssertEqual(error.detail, "the token [redacted] was echoed")

        let notProblem = try await perform(
            [.status(500, headers: ["Content-Type": "text/\(secret)", "Profirest-Request-Id": secret])], secrets: [secret])
        guard case .failed(let plain, _) = notProblem.outcome else { return XCTFail("\(notProblem.outcome)") }
        XCTAssertFalse("\(plain.debugDescription) \(plain.requestID ?? "")".contains(secret))

        let redirect = await apiError {
            _ = try await self.perform([.status(302, headers: ["Location": "https://x.example/?t=\(secret)"])], secrets: [secret])
        }
        XCTAssertEqual(redirect?.code, ErrorCode.unexpectedRedirect)
        XCTAssertFalse(redirect?.debugDescription.contains(secret) ?? true, redirect?.debugDescription ?? "")
    }

    /// Without the secret named, the same answer shows it: the scrubbing is the attempt's, by what it carries.
    func testOnlyTheAttemptsOwnSecretsAreScrubbed() async throws {
        let (outcome, _, _) = try await perform(
            [.problem(422, ErrorCode.validationFailed, extra: ["detail": .string("the token \(Self.secret) was echoed")])])
        guard case .failed(let error, _) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(error.detail, "the token \(Self.secret) was echoed")
    }
}

/// A `ScriptedTransport` that says it bounds each exchange itself, as `URLSessionTransport` does.
private struct SelfBounding: HTTPTransport, BoundsEachAttempt {
    let base: ScriptedTransport

    func send(_ request: HTTPRequest) async throws -> APIResponse { try await base.send(request) }
}
