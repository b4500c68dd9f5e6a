import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// A call that got no answer says where it was going (host and port) and how many attempts were made over how long.
final class UnreachedServerTests: XCTestCase {
    private func api(_ transport: ScriptedTransport, baseURL: String, retries: Int, clock: FeedClock) -> ProfirestApi {
        ProfirestApi(
            options: .init(
                baseURL: baseURL, accessToken: "at_fixed_0123456789", storage: MemoryTokenStorage(), retries: retries,
                transport: transport, clock: { clock.now }, sleep: { clock.advance($0) }),
            authorizer: nil, attemptTimer: { _ in try await Task.sleep(nanoseconds: 60_000_000_000) }, random: { 0.5 })
    }

    func testAConnectionFailureNamesHostPortAndAttempts() async throws {
        let clock = FeedClock(changes: Changes(), origin: WiredClient.start)
        let transport = ScriptedTransport { _ in .fail(URLError(.cannotConnectToHost)) }
        let api = api(transport, baseURL: "https://api.mujprofirest.cz", retries: 3, clock: clock)
        let e = await apiError { _ = try await api.get("/restaurants/11/orders?status=open&token=q_secret") }
        XCTAssertEqual(e?.code, ErrorCode.networkError)
        XCTAssertEqual(transport.requests.count, 4)
        let detail = try XCTUnwrap(e?.detail)
        XCTAssertTrue(detail.hasPrefix("could not connect to api.mujprofirest.cz:443 after 4 attempts over "), detail)
        XCTAssertTrue(detail.contains("URLError -1004"), "the transport's reason stays: \(detail)")
        XCTAssertFalse(detail.contains("q_secret"), "no query: \(detail)")
        XCTAssertFalse(detail.contains("/orders"), "no path: \(detail)")
        XCTAssertTrue(e?.underlyingError is URLError)
    }

    func testTheSecondsAreThoseTheRetriesWaited() async throws {
        let clock = FeedClock(changes: Changes(), origin: WiredClient.start)
        let transport = ScriptedTransport { _ in .fail(URLError(.cannotConnectToHost)) }
        let api = api(transport, baseURL: "http://127.0.0.1:9", retries: 2, clock: clock)
        let e = await apiError { _ = try await api.get("/connection") }
        let waited = clock.now.timeIntervalSince(WiredClient.start)
        XCTAssertGreaterThan(waited, 0)
        XCTAssertEqual(
            e?.detail?.components(separatedBy: " (").first,
            "could not connect to 127.0.0.1:9 after 3 attempts over \(String(format: "%.1f", waited)) s")
    }

    func testOneAttemptAndOtherFailuresAreNamedToo() async throws {
        let cases: [(URLError.Code, String)] = [
            (.cannotFindHost, "could not find the host of"), (.networkConnectionLost, "lost the connection to"),
            (.notConnectedToInternet, "no network to reach"), (.unknown, "no answer from"),
        ]
        for (code, words) in cases {
            let clock = FeedClock(changes: Changes(), origin: WiredClient.start)
            let transport = ScriptedTransport { _ in .fail(URLError(code)) }
            let api = api(transport, baseURL: "http://[::1]:8080", retries: 0, clock: clock)
            let e = await apiError { _ = try await api.get("/connection") }
            XCTAssertEqual(e?.code, ErrorCode.networkError)
            XCTAssertTrue(e?.detail?.hasPrefix("\(words) [::1]:8080 after 1 attempt over 0.0 s (") == true, e?.detail ?? "")
        }
    }

    func testATimeoutNamesWhereToo() async throws {
        let clock = FeedClock(changes: Changes(), origin: WiredClient.start)
        let transport = ScriptedTransport { _ in .fail(URLError(.timedOut)) }
        let api = api(transport, baseURL: "https://api.mujprofirest.cz:8443", retries: 1, clock: clock)
        let e = await apiError { _ = try await api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.timeout)
        XCTAssertTrue(e?.detail?.hasPrefix("no complete answer from api.mujprofirest.cz:8443 after 2 attempts") == true,
                      e?.detail ?? "")
    }

    func testAnAnsweredFailureIsLeftAsTheServerSaidIt() async throws {
        let clock = FeedClock(changes: Changes(), origin: WiredClient.start)
        let transport = ScriptedTransport { _ in .problem(404, ErrorCode.notFound) }
        let api = api(transport, baseURL: "https://api.mujprofirest.cz", retries: 3, clock: clock)
        let e = await apiError { _ = try await api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.notFound)
        XCTAssertNil(e?.detail)
    }
}
