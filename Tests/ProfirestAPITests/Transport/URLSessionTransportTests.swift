import Foundation
import XCTest
@testable import ProfirestAPI

/// The default transport over real loopback sockets: redirects refused, streaming through the data delegate,
/// cancellation, the library's per-attempt deadline, and the headers Linux URLSession adds.
final class URLSessionTransportTests: XCTestCase {
    var server: LoopbackServer!

    override func setUpWithError() throws { server = try LoopbackServer() }
    override func tearDown() { server?.stop() }

    func testAGETDecodesThroughTheLibraryWithBothConnectionPolicies() async throws {
        for reuse in [URLSessionTransport.ConnectionReuse.keepAlive, .closeAfterEachRequest] {
            let api = ProfirestApi(options: .init(baseURL: server.baseURL, transport: URLSessionTransport(connectionReuse: reuse)))
            for _ in 0..<3 {
                let page = try await api.get("/staff", as: StaffMemberPage.self)
                XCTAssertEqual(page.data.count, 11)
            }
        }
    }

    func testRedirectsAreRefusedAndReturnedAsTheyAre() async throws {
        let transport = URLSessionTransport()
        let response = try await transport.send(HTTPRequest(method: "GET", url: server.url("/v2/redirect")))
        XCTAssertEqual(response.status, 302)
        XCTAssertEqual(response.header("location"), "https://elsewhere.example/steal")
        let api = ProfirestApi(options: .init(baseURL: server.baseURL, accessToken: "loopback-token-123", transport: transport))
        let e = await apiError { try await api.get("/redirect") }
        XCTAssertEqual(e?.code, ErrorCode.unexpectedRedirect)
        XCTAssertTrue(e?.detail?.contains("https://elsewhere.example/steal") == true)
    }

    func testStreamingDeliversChunksAsTheServerFlushesThem() async throws {
        let transport = URLSessionTransport()
        let started = Date()
        let streaming = try await transport.stream(HTTPRequest(method: "GET", url: server.url("/v2/stream")))
        XCTAssertEqual(streaming.status, 200)
        XCTAssertEqual(streaming.headers.first { $0.key.lowercased() == "content-type" }?.value, "text/event-stream")
        var text = ""
        var firstChunkAt: TimeInterval?
        for try await chunk in streaming.body {
            if firstChunkAt == nil { firstChunkAt = Date().timeIntervalSince(started) }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let total = Date().timeIntervalSince(started)
        XCTAssertEqual(text.components(separatedBy: "data: frame").count - 1, 3)
        // The first frame came before the last was written (frames are 50 ms apart).
        XCTAssertLessThan(firstChunkAt ?? .infinity, total - 0.05)
    }

    func testCancellingTheTaskCancelsTheRequest() async throws {
        let api = ProfirestApi(options: .init(baseURL: server.baseURL, transport: URLSessionTransport()))
        let task = Task { try await api.get("/hang") }
        try await Task.sleep(nanoseconds: 200_000_000)
        let started = Date()
        task.cancel()
        await assertCancelled { _ = try await task.value }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
    }

    func testTheLibraryEndsAHangingAttemptAtTheTimeout() async throws {
        let api = ProfirestApi(options: .init(baseURL: server.baseURL, retries: 1, timeout: 0.3, transport: URLSessionTransport(),
                                              sleep: { _ in }))
        let started = Date()
        let e = await apiError { try await api.get("/hang") }
        XCTAssertEqual(e?.code, ErrorCode.timeout)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThan(elapsed, 0.55)
        XCTAssertLessThan(elapsed, 3)
    }

    func testHeadersOnTheWire() async throws {
        let closing = ProfirestApi(options: .init(baseURL: server.baseURL, language: "en",
                                                  transport: URLSessionTransport(connectionReuse: .closeAfterEachRequest)))
        let echo: JSONValue = try await closing.post("/echo", body: ["a": 1])
        XCTAssertEqual(echo["headers"]?["accept-language"]?.stringValue, "en")
        XCTAssertEqual(echo["headers"]?["connection"]?.stringValue, "close")
        XCTAssertNotNil(echo["headers"]?["idempotency-key"]?.stringValue)
        XCTAssertEqual(echo["body_length"]?.intValue, 7)
        // language nil: no Accept-Language at all, although Linux URLSession adds one to a request without it.
        let quiet = ProfirestApi(options: .init(baseURL: server.baseURL, language: nil,
                                                transport: URLSessionTransport(connectionReuse: .keepAlive)))
        let quietEcho: JSONValue = try await quiet.get("/echo")
        XCTAssertNil(quietEcho["headers"]?["connection"]?.stringValue.flatMap { $0 == "close" ? $0 : nil })
        XCTAssertNotNil(quietEcho["headers"]?["host"], "the echo lists the request's headers")
        XCTAssertNil(quietEcho["headers"]?["accept-language"], "\(quietEcho)")
    }

    /// `language: nil` means no Accept-Language on every way out of the default transport: a GET, a write (its own
    /// session on Linux), a stream and an OAuth request; with a language, that language on each.
    func testLanguageNilSendsNoAcceptLanguageAnywhere() async throws {
        for language in [nil, "en"] as [String?] {
            let transport = URLSessionTransport()
            let api = ProfirestApi(options: .init(baseURL: server.baseURL, language: language, transport: transport))
            let get: JSONValue = try await api.get("/echo")
            let post: JSONValue = try await api.post("/echo", body: ["a": 1])
            // A stream as the event feed opens one: the client's headers, through the transport's stream session.
            let request = try api.outgoing("GET", path: "/echo", query: [:], body: nil, options: .init())
            let streaming = try await transport.stream(
                HTTPRequest(method: request.method, url: request.target.url, headers: request.headers))
            var streamed = Data()
            for try await chunk in streaming.body { streamed.append(chunk) }
            let stream = try JSONDecoder().decode(JSONValue.self, from: streamed)
            for (name, echo) in [("GET", get), ("POST", post), ("stream", stream)] {
                XCTAssertEqual(echo["headers"]?["accept-language"]?.stringValue, language, "\(name): \(echo)")
            }
            let endpoint = OAuthHTTPEndpoint(transport: transport, base: api.base, settings: api.pipeline.settings)
            do {
                try await endpoint.revoke(form: ["token": "t"], basicAuth: nil)
                XCTFail("the loopback server answers /oauth/revoke with an error")
            } catch let error as ProfirestOAuthError {
                XCTAssertEqual(error.detail, language ?? "(none)", "OAuth")
            }
        }
    }
}

/// Connection reuse policies, seen from the server: the same client port twice means a reused connection.
final class ConnectionReuseTests: XCTestCase {
    var server: LoopbackServer!

    override func setUpWithError() throws { server = try LoopbackServer() }
    override func tearDown() { server?.stop() }

    private func ports(_ reuse: URLSessionTransport.ConnectionReuse, pauseMs: UInt64) async throws -> (Int?, Int?, URLSessionTransport) {
        let transport = URLSessionTransport(connectionReuse: reuse)
        let api = ProfirestApi(options: .init(baseURL: server.baseURL, transport: transport))
        let first: JSONValue = try await api.get("/echo")
        try await Task.sleep(nanoseconds: pauseMs * 1_000_000)
        let second: JSONValue = try await api.get("/echo")
        return (first["peer_port"]?.intValue, second["peer_port"]?.intValue, transport)
    }

    func testKeepAliveReusesTheConnection() async throws {
        let (a, b, _) = try await ports(.keepAlive, pauseMs: 100)
        XCTAssertEqual(a, b)
    }

    func testCloseAfterEachRequestOpensANewOne() async throws {
        let (a, b, _) = try await ports(.closeAfterEachRequest, pauseMs: 0)
        XCTAssertNotEqual(a, b)
    }

    func testWhileBusyReusesOnlyWithinMaxIdle() async throws {
        let (a, b, busy) = try await ports(.keepAliveWhileBusy(maxIdle: 5), pauseMs: 10)
        XCTAssertEqual(a, b)
        XCTAssertEqual(busy.poolGeneration, 0)
        let (c, d, idle) = try await ports(.keepAliveWhileBusy(maxIdle: 0.05), pauseMs: 150)
        XCTAssertNotEqual(c, d)
        XCTAssertEqual(idle.poolGeneration, 1)
    }

    func testTheDefaultOnLinuxReusesOnlyWhileBusy() {
        #if canImport(FoundationNetworking)
        XCTAssertEqual(URLSessionTransport.ConnectionReuse.platformDefault, .keepAliveWhileBusy(maxIdle: 1))
        #else
        XCTAssertEqual(URLSessionTransport.ConnectionReuse.platformDefault, .keepAlive)
        #endif
    }
}
