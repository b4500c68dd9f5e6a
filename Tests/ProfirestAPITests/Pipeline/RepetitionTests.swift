import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// RFC 9110 §9.2.2 in `Core.send`: a failure before anything was sent is retried for every method; one after the
/// request may have reached the server only for idempotent methods and requests with an Idempotency-Key or If-Match.
final class RepetitionTests: XCTestCase {
    /// One way a call can be made, and whether the server may get it twice without harm.
    struct Call: CustomStringConvertible {
        let method: String
        let options: RequestOptions
        let safe: Bool
        let name: String
        var description: String { name }
    }

    static let calls: [Call] = [
        Call(method: "GET", options: .init(), safe: true, name: "GET"),
        Call(method: "HEAD", options: .init(), safe: true, name: "HEAD"),
        Call(method: "POST", options: .init(), safe: true, name: "POST with the library's key"),
        Call(method: "POST", options: .init(idempotencyKey: .key("k-1")), safe: true, name: "POST with the caller's key"),
        Call(method: "POST", options: .init(idempotencyKey: .none), safe: false, name: "POST without a key"),
        Call(method: "PUT", options: .init(), safe: true, name: "PUT"),
        Call(method: "PATCH", options: .init(), safe: false, name: "PATCH"),
        Call(method: "PATCH", options: .init(idempotencyKey: .key("k-2")), safe: true, name: "PATCH with a key"),
        Call(method: "PATCH", options: .init(ifMatch: "\"v1\""), safe: true, name: "PATCH with If-Match"),
        Call(method: "DELETE", options: .init(), safe: true, name: "DELETE"),
        Call(method: "OPTIONS", options: .init(), safe: true, name: "OPTIONS"),
    ]

    private func send(_ call: Call, on h: Harness) async throws {
        let body: RequestBody? = call.method == "GET" || call.method == "HEAD" ? nil : .json(["a": 1])
        let _: JSONValue? = try await h.api.request(call.method, "/customers/c1", body: body, options: call.options)
    }

    /// Sends of `call` when every attempt fails with `step` (3 retries allowed).
    private func sends(_ call: Call, failing step: Step) async -> (count: Int, error: ProfirestAPIError?) {
        let h = Harness(Array(repeating: step, count: 4))
        let e = await apiError { try await self.send(call, on: h) }
        return (h.requests.count, e)
    }

    func testAFailureBeforeAnythingWasSentIsRetriedForEveryMethod() async {
        let failures: [URLError.Code] = [.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
                                         .secureConnectionFailed]
        for call in Self.calls {
            for code in failures {
                let (count, e) = await sends(call, failing: .fail(URLError(code)))
                XCTAssertEqual(count, 4, "\(call), \(code)")
                XCTAssertEqual(e?.code, ErrorCode.networkError, "\(call), \(code)")
            }
        }
    }

    func testAFailureAfterSendingIsRetriedOnlyWhenRepeatingIsSafe() async {
        let failures: [(String, Step, String)] = [
            ("connection lost", .fail(URLError(.networkConnectionLost)), ErrorCode.networkError),
            ("transport timed out", .fail(URLError(.timedOut)), ErrorCode.timeout),
            ("no answer within the timeout", .hang, ErrorCode.timeout),
            ("an unknown failure", .fail(URLError(.unknown)), ErrorCode.networkError),
            ("500", .status(500), "internal_error"),
            ("502", .status(502), "bad_gateway"),
            ("504", .status(504), "gateway_timeout"),
        ]
        for call in Self.calls {
            for (name, step, code) in failures {
                let (count, e) = await sends(call, failing: step)
                XCTAssertEqual(count, call.safe ? 4 : 1, "\(call) after \(name)")
                XCTAssertEqual(e?.code, code, "\(call) after \(name)")
            }
        }
    }

    /// 429 and 503 say the server did not handle the request: repeating cannot apply it twice.
    func testARefusalThatWasNotActedOnIsRetriedForEveryMethod() async {
        for call in Self.calls {
            for status in [429, 503] {
                let (count, _) = await sends(call, failing: .status(status, headers: ["Retry-After": "1"]))
                XCTAssertEqual(count, 4, "\(call) after \(status)")
            }
        }
    }

    func testAKeylessPostCutOffIsReportedOnceAndASecondTryIsTheCallersChoice() async throws {
        let h = Harness([.fail(URLError(.networkConnectionLost)), .json(201, ["id": "o1"])])
        let options = RequestOptions(idempotencyKey: .none)
        let e = await apiError { let _: JSONValue? = try await h.api.post("/restaurants/11/orders", body: ["x": 1], options: options) }
        XCTAssertEqual(e?.code, ErrorCode.networkError)
        XCTAssertEqual(h.requests.count, 1)
        XCTAssertEqual(h.sleeps.all, [])
        let again: JSONValue? = try await h.api.post("/restaurants/11/orders", body: ["x": 1], options: options)
        XCTAssertEqual(again?["id"]?.stringValue, "o1")
        XCTAssertNil(h.requests[0].header("Idempotency-Key"))
    }

    func testTheRuleByRequest() {
        func request(_ method: String, _ headers: [String: String] = [:], known: Bool = false) -> OutgoingRequest {
            let url = URL(string: "https://api.mujprofirest.cz/v2/x")!
            return OutgoingRequest(
                method: method, target: RequestTarget(url: url, isAPIOrigin: true, origin: Origin(url)!),
                headers: headers, body: nil, knownSafeToRepeat: known)
        }
        for method in ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"] { XCTAssertTrue(Repetition.safe(request(method)), method) }
        XCTAssertFalse(Repetition.safe(request("POST")))
        XCTAssertFalse(Repetition.safe(request("PATCH")))
        XCTAssertTrue(Repetition.safe(request("POST", ["idempotency-key": "k"])))
        XCTAssertTrue(Repetition.safe(request("PATCH", ["If-Match": "\"e\""])))
        XCTAssertTrue(Repetition.safe(request("POST", known: true)))
    }
}
