import Foundation
import XCTest
@_spi(TransportTuning) @testable import ProfirestAPI

/// Every transport the library ships, over real loopback sockets, held to the same promises: redirects refused,
/// streaming as the server flushes, cancellation, the library's per-attempt deadline, and the headers exactly as
/// the request has them.
final class TransportTests: XCTestCase {
    var server: LoopbackServer!

    override func setUpWithError() throws { server = try LoopbackServer() }
    override func tearDown() { server?.stop() }

    func testAGETDecodesThroughTheLibrary() async throws {
        var transports: [(String, any HTTPTransport)] = TransportKind.available.map { ("\($0)", $0.make()) }
        transports.append(("urlSession close", URLSessionTransport(policy: .closeAfterEachRequest)))
        for (name, transport) in transports {
            let api = ProfirestApi(options: .init(baseURL: server.baseURL, transport: transport))
            for _ in 0..<3 {
                let page = try await api.get("/staff", as: StaffMemberPage.self)
                XCTAssertEqual(page.data.count, 11, name)
            }
        }
    }

    func testRedirectsAreRefusedAndReturnedAsTheyAre() async throws {
        for kind in TransportKind.available {
            let transport = kind.make()
            let response = try await transport.send(HTTPRequest(method: "GET", url: server.url("/v2/redirect")))
            XCTAssertEqual(response.status, 302, "\(kind)")
            XCTAssertEqual(response.header("location"), "https://elsewhere.example/steal", "\(kind)")
            let api = ProfirestApi(options: .init(baseURL: server.baseURL, accessToken: "loopback-token-123", transport: transport))
            let e = await apiError { try await api.get("/redirect") }
            XCTAssertEqual(e?.code, ErrorCode.unexpectedRedirect, "\(kind)")
            XCTAssertTrue(e?.detail?.contains("https://elsewhere.example/steal") == true, "\(kind)")
        }
    }

    func testStreamingDeliversChunksAsTheServerFlushesThem() async throws {
        for kind in TransportKind.available {
            let transport = kind.make()
            let started = Date()
            // A comment at once, then a frame a second for two seconds: far enough apart that a busy machine
            // delaying this task cannot make the frames arrive together.
            let streaming = try await transport.stream(HTTPRequest(
                method: "GET", url: server.url("/v2/slow-stream?seconds=2&interval=1")))
            XCTAssertEqual(streaming.status, 200, "\(kind)")
            XCTAssertEqual(streaming.headers.first { $0.key.lowercased() == "content-type" }?.value, "text/event-stream", "\(kind)")
            var text = ""
            var firstChunkAt: TimeInterval?
            for try await chunk in streaming.body {
                if firstChunkAt == nil { firstChunkAt = Date().timeIntervalSince(started) }
                text += String(decoding: chunk, as: UTF8.self)
            }
            let total = Date().timeIntervalSince(started)
            XCTAssertEqual(text.components(separatedBy: "data: frame").count - 1, 2, "\(kind)")
            // The first bytes came before the last frame was written (a second later).
            XCTAssertLessThan(firstChunkAt ?? .infinity, total - 0.5, "\(kind)")
        }
    }

    func testCancellingTheTaskCancelsTheRequest() async throws {
        for kind in TransportKind.available {
            let api = ProfirestApi(options: .init(baseURL: server.baseURL, transport: kind.make()))
            let task = Task { try await api.get("/hang") }
            try await Task.sleep(nanoseconds: 200_000_000)
            let started = Date()
            task.cancel()
            await assertCancelled { _ = try await task.value }
            XCTAssertLessThan(Date().timeIntervalSince(started), 10, "\(kind): at once, not at the 30 s timeout")
        }
    }

    func testTheLibraryEndsAHangingAttemptAtTheTimeout() async throws {
        for kind in TransportKind.available {
            let api = ProfirestApi(options: .init(baseURL: server.baseURL, retries: 1, timeout: 0.3, transport: kind.make(),
                                                  sleep: { _ in }))
            let started = Date()
            let e = await apiError { try await api.get("/hang") }
            XCTAssertEqual(e?.code, ErrorCode.timeout, "\(kind)")
            let elapsed = Date().timeIntervalSince(started)
            XCTAssertGreaterThan(elapsed, 0.55, "\(kind)")
            XCTAssertLessThan(elapsed, 15, "\(kind): the request hangs for ever without the deadline")
        }
    }

    /// A stream's timeout bounds the wait for its head, not the stream: a head that never comes ends the attempt.
    func testAStreamWhoseHeadNeverComesEndsAtTheTimeout() async throws {
        for kind in TransportKind.available {
            let started = Date()
            do {
                _ = try await kind.make().stream(HTTPRequest(method: "GET", url: server.url("/v2/hang"), timeout: 0.5))
                XCTFail("\(kind): a head that never came")
            } catch let error as URLError {
                XCTAssertEqual(error.code, .timedOut, "\(kind)")
            }
            XCTAssertLessThan(Date().timeIntervalSince(started), 15, "\(kind): the head never comes without the deadline")
        }
    }

    func testHeadersOnTheWire() async throws {
        let closing = ProfirestApi(options: .init(baseURL: server.baseURL, language: "en",
                                                  transport: URLSessionTransport(policy: .closeAfterEachRequest)))
        let echo: JSONValue = try await closing.post("/echo", body: ["a": 1])
        XCTAssertEqual(echo["headers"]?["accept-language"]?.stringValue, "en")
        XCTAssertEqual(echo["headers"]?["connection"]?.stringValue, "close")
        XCTAssertNotNil(echo["headers"]?["idempotency-key"]?.stringValue)
        XCTAssertEqual(echo["body_length"]?.intValue, 7)
        for kind in TransportKind.available {
            // language nil: no Accept-Language at all, although Linux URLSession adds one to a request without it.
            let quiet = ProfirestApi(options: .init(baseURL: server.baseURL, language: nil, transport: kind.make()))
            let quietEcho: JSONValue = try await quiet.get("/echo")
            XCTAssertNil(quietEcho["headers"]?["connection"]?.stringValue.flatMap { $0 == "close" ? $0 : nil }, "\(kind)")
            XCTAssertNotNil(quietEcho["headers"]?["host"], "the echo lists the request's headers")
            XCTAssertNil(quietEcho["headers"]?["accept-language"], "\(kind): \(quietEcho)")
        }
    }

    /// `language: nil` means no Accept-Language on every way out of a transport: a GET, a write, a stream and an
    /// OAuth request; with a language, that language on each.
    func testLanguageNilSendsNoAcceptLanguageAnywhere() async throws {
        for kind in TransportKind.available {
            for language in [nil, "en"] as [String?] {
                let transport = kind.make()
                let api = ProfirestApi(options: .init(baseURL: server.baseURL, language: language, transport: transport))
                let get: JSONValue = try await api.get("/echo")
                let post: JSONValue = try await api.post("/echo", body: ["a": 1])
                // A stream as the event feed opens one: the client's headers, through the transport's stream session.
                let request = try ProfirestRequest<JSONValue?>("GET", "/echo")
                    .outgoing(base: try api.core.base.get(), language: api.core.language, now: Date())
                let streaming = try await transport.stream(
                    HTTPRequest(method: request.method, url: request.target.url, headers: request.headers))
                var streamed = Data()
                for try await chunk in streaming.body { streamed.append(chunk) }
                let stream = try JSONDecoder().decode(JSONValue.self, from: streamed)
                for (name, echo) in [("GET", get), ("POST", post), ("stream", stream)] {
                    XCTAssertEqual(echo["headers"]?["accept-language"]?.stringValue, language, "\(kind) \(name): \(echo)")
                }
                do {
                    try await OAuthEndpoint(core: api.core).revoke(form: ["token": "t"], basicAuth: nil, retries: 0)
                    XCTFail("the loopback server answers /oauth/revoke with an error")
                } catch let error as ProfirestOAuthError {
                    XCTAssertEqual(error.detail, language ?? "(none)", "\(kind) OAuth")
                }
            }
        }
    }
}

/// Connection reuse policies, seen from the server: the same client port twice means a reused connection.
final class ConnectionReuseTests: XCTestCase {
    var server: LoopbackServer!

    override func setUpWithError() throws { server = try LoopbackServer() }
    override func tearDown() { server?.stop() }

    private func ports(_ reuse: URLSessionTransport.ConnectionPolicy, pauseMs: UInt64) async throws -> (Int?, Int?, URLSessionTransport) {
        let transport = URLSessionTransport(policy: reuse)
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
        XCTAssertEqual(URLSessionTransport.ConnectionPolicy.platformDefault, .keepAliveWhileBusy(maxIdle: 1))
        #else
        XCTAssertEqual(URLSessionTransport.ConnectionPolicy.platformDefault, .keepAlive)
        #endif
    }
}
