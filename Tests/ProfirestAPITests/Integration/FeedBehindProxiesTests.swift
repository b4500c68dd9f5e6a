#if os(Linux)
import Foundation
import ProfirestTestSupport
import XCTest
@testable import ProfirestAPI

/// The event feed and sign-in behind real proxies: nginx with TLS (a private CA trusted through the option) in front
/// of the sandbox — a proxy that buffers the stream, one that cuts quiet connections after 5 s, a half-open connection
/// (a TCP proxy that stops forwarding without closing), and a proxy with its own login. Each event is tagged, so a
/// test sees every event came once and in order.
final class FeedBehindProxiesTests: XCTestCase {
    private static let shared = Locked<(SandboxServer, NetHarness)?>(nil)
    private var sandbox: SandboxServer!
    private var net: NetHarness!
    private var storage: MemoryTokenStorage!
    private let seen = FeedRecord()
    private let timeline = Locked([(Date, ProfirestEvent.FeedChange)]())

    override func setUp() async throws {
        if Self.shared.withLock({ $0 }) == nil {
            let sandbox = try SandboxServer.start()
            do {
                let net = try NetHarness.forTest(upstream: sandbox.api)
                Self.shared.withLock { $0 = (sandbox, net) }
            } catch {
                sandbox.stop()
                throw error
            }
        }
        (sandbox, net) = try XCTUnwrap(Self.shared.withLock { $0 })
        try await sandbox.raw("POST", "/_sandbox/reset")
        try await sandbox.raw("POST", "/_sandbox/stream", json: ["down": false, "retry_after": 300])
        try await sandbox.config(["sse_retry_ms": 1000, "heartbeat": 15])
        storage = MemoryTokenStorage()
        try await sandbox.pairDevice(clientID: "profirest-kds", storage: storage)
    }

    override class func tearDown() {
        if let (sandbox, net) = shared.withLock({ $0 }) {
            net.stop()
            sandbox.stop()
        }
        shared.withLock { $0 = nil }
    }

    /// A client of the sandbox through `block` of the proxy (or its delaying, freezable TCP proxy in front).
    private func client(_ block: NetHarness.Block, delayed: Bool = false, transport: (any HTTPTransport)? = nil) -> ProfirestApi {
        let timeline = self.timeline
        return ProfirestApi(options: .init(
            baseURL: net.base(block, delayed: delayed), clientID: "profirest-kds", language: "en", storage: storage,
            retries: 2, retryDelay: 0.05, timeout: 10, transport: transport,
            observer: { event in if case .feed(let change) = event { timeline.withLock { $0.append((Date(), change)) } } },
            trustedCertificates: .pemFile(net.caFile)))
    }

    private func watcher(_ api: ProfirestApi, interval: TimeInterval = 1) -> EventWatcher {
        let seen = self.seen
        return api.eventWatcher(.init(
            restaurantID: "11", types: ["catalog.updated"], onEvents: { seen.add($0) },
            onError: { seen.note("error:\($0)") }, interval: interval))
    }

    private func emit(_ tag: String) async throws {
        try await sandbox.raw("POST", "/_sandbox/catalog/11/sold_out", json: ["product_ids": [tag]])
    }

    private func arrive(_ tags: [String], within seconds: TimeInterval, file: StaticString = #filePath, line: UInt = #line) async {
        let arrived = await waitUntil(seconds) { self.seen.tags.count >= tags.count }
        XCTAssertTrue(arrived, "waited \(seconds) s for \(tags), have \(seen.tags)", file: file, line: line)
        XCTAssertEqual(seen.tags, tags, "every event once, in order", file: file, line: line)
    }

    private func first(_ change: ProfirestEvent.FeedChange, after start: Date) -> Date? {
        timeline.withLock { $0 }.first { $0.1 == change && $0.0 >= start }?.0
    }

    /// A proxy that buffers the stream (not even its head comes through): the feed polls 10 s after it asked for the
    /// stream, and an event comes no later than the polling interval plus 10 s.
    func testBehindABufferingProxyTheFeedPollsWithinTheStartDeadline() async throws {
        let watcher = watcher(client(.h1Buffering), interval: 1)
        let started = Date()
        let run = Task { await watcher.run() }
        let polling = await waitUntil(40) { self.first(.polling, after: started) != nil }
        XCTAssertTrue(polling, "the feed never polled")
        let after = try XCTUnwrap(first(.polling, after: started)).timeIntervalSince(started)
        // The start at the end of the feed (one page) and the 10 s start deadline; 10 s more for a busy machine (load
        // 6 on 2 cores: the page and the stream's request through nginx to the sandbox can take seconds).
        XCTAssertLessThan(after, 20, "polling began \(after) s after the start")
        XCTAssertGreaterThan(after, 9, "the stream had its 10 s")
        let emitted = Date()
        try await emit("buffered-0")
        await arrive(["buffered-0"], within: 30)
        XCTAssertLessThan(Date().timeIntervalSince(emitted), 1 + 10 + 8, "within the polling interval, not a stream's retry")
        watcher.stop()
        await run.value
        XCTAssertEqual(seen.notes, [], "a buffering proxy is no error")
    }

    /// A proxy that cuts connections quiet for 5 s (the heartbeat is 15 s): each cut of a healthy stream is followed
    /// by a new connection at once, so the feed streams at least 90 % of the time and never falls back to polling.
    func testAProxysIdleCutsKeepTheFeedStreaming() async throws {
        let watcher = watcher(client(.h1ShortIdle))
        let run = Task { await watcher.run() }
        let connected = await waitUntil(30) { watcher.isStreaming }
        XCTAssertTrue(connected)
        let start = Date()
        try await emit("cut-0")
        try await Task.sleep(nanoseconds: 8_000_000_000)
        try await emit("cut-1")
        try await Task.sleep(nanoseconds: 8_000_000_000)
        try await emit("cut-2")
        await arrive(["cut-0", "cut-1", "cut-2"], within: 30)
        let end = Date()
        watcher.stop()
        await run.value
        let changes = timeline.withLock { $0 }.filter { $0.0 >= start && $0.0 <= end }
        XCTAssertFalse(changes.contains { $0.1 == .polling }, "never polled: \(changes.map(\.1))")
        XCTAssertGreaterThanOrEqual(changes.filter { $0.1 == .dropped }.count, 2, "the proxy cut the quiet stream")
        // Time streaming: from each `connected` to the next `dropped` (or the end).
        var streaming: TimeInterval = 0
        var since: Date? = start
        for (time, change) in changes {
            if change == .connected, since == nil { since = time }
            if change == .dropped, let from = since {
                streaming += time.timeIntervalSince(from)
                since = nil
            }
        }
        if let since { streaming += end.timeIntervalSince(since) }
        let share = streaming / end.timeIntervalSince(start)
        // After each cut of a healthy stream the feed waits the server's reconnection time ±25 % (issue 29, item 5:
        // a fleet must not come back in one burst), then reconnects; 86 % was seen under load. A fallback to polling,
        // or the failure backoff growing after each cut, would leave far less.
        XCTAssertGreaterThanOrEqual(share, 0.6, "streaming \(Int(share * 100)) % of the time: \(changes.map(\.1))")
        XCTAssertEqual(seen.notes, [])
    }

    /// A half-open connection — the TCP proxy stops forwarding without closing — is noticed within twice the
    /// announced heartbeat plus 2 s, and what came meanwhile arrives after the reconnection, once and in order.
    func testAHalfOpenConnectionIsNoticedByTheHeartbeat() async throws {
        try await sandbox.config(["heartbeat": 1])
        let watcher = watcher(client(.h1, delayed: true, transport: try CurlTransport(trustedCertificates: .pemFile(net.caFile))))
        let run = Task { await watcher.run() }
        let connected = await waitUntil(30) { watcher.isStreaming }
        XCTAssertTrue(connected)
        try await emit("open-0")
        await arrive(["open-0"], within: 30)
        let frozenAt = Date()
        XCTAssertGreaterThan(net.freeze(), 0, "the stream's connection was frozen")
        try await emit("frozen-0")
        let noticed = await waitUntil(60) { self.first(.dropped, after: frozenAt) != nil }
        XCTAssertTrue(noticed, "the dead connection was never noticed")
        let after = try XCTUnwrap(first(.dropped, after: frozenAt)).timeIntervalSince(frozenAt)
        XCTAssertLessThan(after, 2 * 1 + 2 + 8, "noticed after \(after) s (heartbeat 1 s; 8 s for a busy machine; without the announced heartbeat it would be the 45 s default): \(timeline.withLock { $0 }.map { ($0.0.timeIntervalSince(frozenAt), $0.1) })")
        try await emit("frozen-1")
        await arrive(["open-0", "frozen-0", "frozen-1"], within: 30)
        watcher.stop()
        await run.value
    }

    /// A proxy's own login on the API: the call says so (scheme and realm), and no token is refreshed or touched —
    /// for a call, for a call whose token must be refreshed first (the token endpoint is behind the login too), and
    /// for the event stream.
    func testAProxysLoginIsReportedAndSpendsNoRefresh() async throws {
        let api = client(.basic)
        let e = await apiError { _ = try await api.connection() }
        XCTAssertEqual(e?.code, ErrorCode.proxyAuthenticationRequired)
        XCTAssertEqual(e?.status, 401)
        XCTAssertTrue(e?.detail?.contains(#"Basic realm "proxy-realm""#) == true, e?.detail ?? "")

        // An expired access token: the refresh meets the proxy's login first.
        let key = "profirest-api:profirest-kds"
        var state = try StoredState.decode(try XCTUnwrap(storage.get(key)), location: key)
        let refreshToken = state.refreshToken
        state.expiresAt = Date().addingTimeInterval(-60)
        try storage.set(key, try state.encoded())
        let expired = client(.basic)
        let refreshFailure = await apiError { _ = try await expired.connection() }
        XCTAssertEqual(refreshFailure?.code, ErrorCode.proxyAuthenticationRequired, "\(String(describing: refreshFailure))")
        XCTAssertTrue(expired.isPaired, "a proxy's login does not unpair")
        XCTAssertEqual(try StoredState.decode(try XCTUnwrap(storage.get(key)), location: key).refreshToken, refreshToken, "tokens untouched")

        let watcher = watcher(expired)
        let run = Task { await watcher.run() }
        let reported = await waitUntil(30) { self.seen.notes.contains { $0.contains("proxy_authentication_required") } }
        XCTAssertTrue(reported, "\(seen.notes)")
        watcher.stop()
        await run.value
        let refreshes = try await sandbox.refreshes("profirest-kds")
        XCTAssertEqual(refreshes, 0, "the sandbox saw no token request")
    }
}
#endif

#if os(Linux)
/// Partner consent through nginx with TLS: the sandbox behind the proxy names the proxy's https origin as its issuer,
/// so the library's RFC 9207 check passes for an approval and a denial, and refuses a callback whose `iss` was
/// tampered with (here: the sandbox's own direct address).
final class ConsentBehindProxyTests: XCTestCase {
    private var sandbox: SandboxServer!
    private var net: NetHarness!

    override func setUp() async throws {
        sandbox = try SandboxServer.start()
        net = try NetHarness.forTest(upstream: sandbox.api)
    }

    override func tearDown() {
        net?.stop()
        sandbox?.stop()
    }

    private func client() -> ProfirestApi {
        ProfirestApi(options: .init(baseURL: net.base(.h2), clientID: "moje-aplikace", trustedCertificates: .pemFile(net.caFile)))
    }

    /// Opens the consent URL as a browser would; the transport never follows the sandbox's 302.
    private func callback(_ url: URL) async throws -> URL {
        let response = try await CurlTransport(trustedCertificates: .pemFile(net.caFile)).send(HTTPRequest(method: "GET", url: url))
        XCTAssertEqual(response.status, 302)
        return try XCTUnwrap(response.header("Location").flatMap(URL.init(string:)))
    }

    private func iss(_ url: URL) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "iss" }?.value
    }

    func testApprovalThroughTheProxyCompletesWithTheProxysIssuer() async throws {
        try await sandbox.admin("POST", "consents/auto", ["decision": "approve", "restaurant_ids": ["11"]])
        let api = client()
        let url = try api.authorizationURL(redirectURI: "mojeaplikace://profirest", scope: "restaurants:read orders:read")
        let back = try await callback(url)
        XCTAssertEqual(iss(back), net.base(.h2))
        let connection = try await api.completeAuthorization(back)
        XCTAssertEqual(connection.restaurants.map(\.id), ["11"])
        let restaurant: JSONValue? = try await api.get("/restaurants/11")
        XCTAssertEqual(restaurant?["id"]?.stringValue, "11")
    }

    func testADenialThroughTheProxyIsAccessDenied() async throws {
        try await sandbox.admin("POST", "consents/auto", ["decision": "deny"])
        let api = client()
        let back = try await callback(try api.authorizationURL(redirectURI: "mojeaplikace://profirest", scope: "restaurants:read"))
        XCTAssertEqual(iss(back), net.base(.h2))
        do {
            _ = try await api.completeAuthorization(back)
            XCTFail("a denied consent does not connect")
        } catch let error as ProfirestOAuthError {
            XCTAssertEqual(error.error, "access_denied")
        }
        XCTAssertFalse(api.isPaired)
    }

    func testATamperedIssuerIsRefused() async throws {
        try await sandbox.admin("POST", "consents/auto", ["decision": "approve", "restaurant_ids": ["11"]])
        let api = client()
        let back = try await callback(try api.authorizationURL(redirectURI: "mojeaplikace://profirest", scope: "restaurants:read"))
        var components = try XCTUnwrap(URLComponents(url: back, resolvingAgainstBaseURL: false))
        components.queryItems = components.queryItems?.map { $0.name == "iss" ? URLQueryItem(name: "iss", value: sandbox.api) : $0 }
        do {
            _ = try await api.completeAuthorization(try XCTUnwrap(components.url))
            XCTFail("a callback from another issuer must be refused")
        } catch let error as ProfirestOAuthError {
            XCTAssertEqual(error.error, "invalid_issuer")
        }
        XCTAssertFalse(api.isPaired)
    }
}
#endif
