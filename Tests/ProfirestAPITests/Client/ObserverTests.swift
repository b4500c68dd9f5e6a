import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// The observer hears each attempt and each retry of the pipeline, in order, with what is safe to log.
final class ObserverTests: XCTestCase {
    private func client(_ steps: [Step], events: Locked<[ProfirestEvent]>) -> (ProfirestApi, ScriptedTransport) {
        let timer = ManualTimer()
        let transport = ScriptedTransport(steps, timer: timer)
        let api = ProfirestApi(
            options: .init(
                accessToken: "at_observer_secret", transport: transport, clock: { Harness.now }, sleep: { _ in },
                observer: { event in events.withLock { $0.append(event) } }),
            authorizer: TestAuthorizer(token: "at_observer_secret"),
            attemptTimer: { try await timer.wait($0) }, random: { 0.5 })
        return (api, transport)
    }

    func testAttemptsAndRetriesAreHeardInOrder() async throws {
        let events = Locked([ProfirestEvent]())
        let (api, _) = client(
            [.problem(503, "service_unavailable", headers: ["Retry-After": "2"]), .fail(URLError(.networkConnectionLost)),
             .json(201, ["id": "c1"], headers: ["Profirest-Request-Id": "req_42"])],
            events: events)
        _ = try await api.post("/customers?x=signed", body: ["name": "Jana"], options: .init(idempotencyKey: .key("k-1")))
        let seen = events.withLock { $0 }
        let attempt = { (n: Int) in ProfirestEvent.Attempt(method: "POST", path: "/v2/customers", number: n, idempotencyKey: "k-1") }
        XCTAssertEqual(seen.count, 8)
        XCTAssertEqual(seen[0], .attemptStarted(attempt(1)))
        guard case .attemptFinished(attempt(1), let first) = seen[1] else { return XCTFail("\(seen[1])") }
        XCTAssertEqual(first.status, 503)
        XCTAssertEqual(first.errorCode, "service_unavailable")
        XCTAssertEqual(seen[2], .retryScheduled(attempt(1), delay: 2, reason: .retryAfter))
        guard case .attemptFinished(attempt(2), let second) = seen[4] else { return XCTFail("\(seen[4])") }
        XCTAssertEqual(second.status, 0)
        XCTAssertEqual(second.errorCode, ErrorCode.networkError)
        guard case .retryScheduled(attempt(2), _, .backoff) = seen[5] else { return XCTFail("\(seen[5])") }
        guard case .attemptFinished(attempt(3), let third) = seen[7] else { return XCTFail("\(seen[7])") }
        XCTAssertEqual(third.status, 201)
        XCTAssertNil(third.errorCode)
        XCTAssertEqual(third.requestID, "req_42")
        let text = seen.map { "\($0) \(String(reflecting: $0))" }.joined()
        XCTAssertFalse(text.contains("at_observer_secret"))
        XCTAssertFalse(text.contains("signed"), "the path without its query")
    }

    func testARedirectIsHeardWithItsStatus() async throws {
        let events = Locked([ProfirestEvent]())
        let (api, _) = client([.status(302, headers: ["Location": "https://elsewhere.example"])], events: events)
        let e = await apiError { try await api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.unexpectedRedirect)
        let seen = events.withLock { $0 }
        XCTAssertEqual(seen.count, 2)
        guard case .attemptFinished(_, let result) = seen[1] else { return XCTFail() }
        XCTAssertEqual(result.status, 302)
        XCTAssertEqual(result.errorCode, ErrorCode.unexpectedRedirect)
    }
}
