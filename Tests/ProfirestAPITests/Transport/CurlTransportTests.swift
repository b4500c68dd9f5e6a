#if os(Linux)
import Foundation
import ProfirestTestSupport
import XCTest
@testable import ProfirestAPI

/// What the libcurl transport adds to the promises every transport keeps (`TransportTests`): connections kept for
/// reads and writes, an idle stream that costs nothing, a bounded buffer behind a flooding stream, a reply that is
/// not HTTP as a clear error, headers exactly as set, and a libcurl that cannot be used as a fallback.
final class CurlTransportTests: XCTestCase {
    var server: LoopbackServer!
    /// The name the engine gives its thread (CurlEngine.init).
    let engineThread = "ProfirestCurl"

    override func setUpWithError() throws { server = try LoopbackServer() }
    override func tearDown() { server?.stop() }

    /// Reads and writes share one kept-alive connection, also after a pause longer than FoundationNetworking's 1 s.
    func testReadsAndWritesKeepTheirConnectionAcrossAnIdlePause() async throws {
        let api = ProfirestApi(options: .init(baseURL: server.baseURL, transport: try CurlTransport()))
        let first: JSONValue = try await api.get("/echo")
        let write: JSONValue = try await api.post("/echo", body: ["a": 1])
        try await Task.sleep(nanoseconds: 1_500_000_000)
        let afterPause: JSONValue = try await api.get("/echo")
        let port = first["peer_port"]?.intValue
        XCTAssertNotNil(port)
        XCTAssertEqual(write["peer_port"]?.intValue, port, "the write went on the kept connection")
        XCTAssertEqual(afterPause["peer_port"]?.intValue, port, "the connection outlived a 1.5 s pause")
        XCTAssertEqual(write["body_length"]?.intValue, 7)
    }

    /// Exactly the request's headers: none of libcurl's defaults (Accept, a form Content-Type, Expect), an empty
    /// value sent empty, a header with a line break refused before anything is sent.
    func testHeadersGoExactlyAsSet() async throws {
        let transport = try CurlTransport()
        let body = Data(repeating: 0x41, count: 2_000_000)  // large enough for libcurl to want Expect: 100-continue
        let plain = try await transport.send(HTTPRequest(method: "POST", url: server.url("/v2/echo"), body: body))
        let echo = try JSONDecoder().decode(JSONValue.self, from: plain.data)
        let headers = echo["headers"]?.objectValue ?? [:]
        // Accept-Encoding is the one header of libcurl's own: the encodings it decodes, offered as URLSession does.
        XCTAssertEqual(Set(headers.keys), ["host", "content-length", "accept-encoding"], "\(headers)")
        XCTAssertEqual(echo["body_length"]?.intValue, body.count)

        let set = try await transport.send(HTTPRequest(
            method: "PATCH", url: server.url("/v2/echo"),
            headers: ["Accept": "application/json", "X-Empty": "", "Content-Type": "application/merge-patch+json"],
            body: Data("{}".utf8)))
        let setEcho = try JSONDecoder().decode(JSONValue.self, from: set.data)
        XCTAssertEqual(setEcho["method"]?.stringValue, "PATCH")
        XCTAssertEqual(setEcho["headers"]?["accept"]?.stringValue, "application/json")
        XCTAssertEqual(setEcho["headers"]?["x-empty"]?.stringValue, "")
        XCTAssertEqual(setEcho["headers"]?["content-type"]?.stringValue, "application/merge-patch+json")

        do {
            _ = try await transport.send(HTTPRequest(method: "GET", url: server.url("/v2/echo"), headers: ["X-Evil": "a\r\nHost: b"]))
            XCTFail("a header with a line break must not be sent")
        } catch let error as ProfirestUsageError {
            XCTAssertTrue(error.message.contains("X-Evil"), error.message)
        }
    }

    /// Response header names are read without regard to case; repeated headers are joined.
    func testResponseHeadersAreCaseInsensitive() async throws {
        let response = try await CurlTransport().send(HTTPRequest(method: "GET", url: server.url("/v2/staff")))
        XCTAssertEqual(response.header("CONTENT-TYPE"), "application/json")
        XCTAssertEqual(response.header("content-length").flatMap(Int.init), response.data.count)
    }

    /// A head far larger than the API's and a status line that is not HTTP: `invalid_response`, never retried.
    func testARepliesThatIsNotHTTPIsAnInvalidResponse() async throws {
        let attempts = Locked(0)
        let api = ProfirestApi(options: .init(
            baseURL: server.baseURL, transport: try CurlTransport(), sleep: { _ in },
            observer: { if case .attemptStarted = $0 { attempts.withLock { $0 += 1 } } }))
        for path in ["/huge-head", "/bad-status"] {
            attempts.withLock { $0 = 0 }
            let e = await apiError { try await api.get(path) }
            XCTAssertEqual(e?.code, ErrorCode.invalidResponse, "\(path): \(String(describing: e))")
            XCTAssertEqual(attempts.withLock { $0 }, 1, "\(path): not retried")
        }
    }

    /// One and then 100 quiet event streams held open cost (nearly) nothing: the engine's thread sleeps in epoll_wait.
    /// Counted, not timed: once the streams are up (libcurl's connection timers fire within the first second, 55
    /// wake-ups for 100 streams, then none), the engine's thread is not woken at all, which a busy machine does not
    /// change. A spin makes no voluntary switch, so the engine's CPU time is bounded too, far below a spin's share
    /// even on a loaded machine, and the whole process against a spin anywhere (FoundationNetworking's took 64-80 %
    /// of a core).
    func testQuietStreamsCostNoCPU() async throws {
        let transport = try CurlTransport()
        for count in [1, 100] {
            var bodies: [AsyncThrowingStream<Data, Error>] = []
            for _ in 0..<count {
                let head = try await transport.stream(HTTPRequest(method: "GET", url: server.url("/v2/quiet-stream")))
                XCTAssertEqual(head.status, 200)
                var iterator = head.body.makeAsyncIterator()
                _ = try await iterator.next()  // the comment: the stream is up
                bodies.append(head.body)
            }
            try await Task.sleep(nanoseconds: 1_500_000_000)  // the connections' own timers
            let wakesBefore = try XCTUnwrap(ProcessControl.switchesOfThreads(named: engineThread), "no engine thread")
            let engineBefore = try XCTUnwrap(ProcessControl.cpuSecondsOfThreads(named: engineThread))
            let before = ProcessControl.cpuMicroseconds() / 1e6
            let started = Date()
            try await Task.sleep(nanoseconds: 4_000_000_000)
            let seconds = Date().timeIntervalSince(started)
            let wakes = try XCTUnwrap(ProcessControl.switchesOfThreads(named: engineThread)).voluntary - wakesBefore.voluntary
            let engine = try XCTUnwrap(ProcessControl.cpuSecondsOfThreads(named: engineThread)) - engineBefore
            let process = ProcessControl.cpuMicroseconds() / 1e6 - before
            XCTAssertLessThanOrEqual(wakes, 2, "\(count) quiet streams: the engine woke \(wakes) times in \(seconds) s")
            XCTAssertLessThan(engine / seconds * 100, 5.0, "\(count) quiet streams: the engine took \(engine) s in \(seconds) s")
            XCTAssertLessThan(process / seconds * 100, 10.0, "\(count) quiet streams: the process took \(process) s in \(seconds) s")
            for body in bodies { await body.close() }
        }
    }

    /// A server that floods the stream while the reader is slow: the transfer pauses, so the server can hand over
    /// only what the socket buffers hold besides the transport's bounded buffer — not the gigabyte it would send.
    func testAFloodingStreamIsHeldBackByItsSlowReader() async throws {
        let transport = try CurlTransport(trustedCertificates: nil, streamBufferLimit: 256 * 1024)
        let head = try await transport.stream(HTTPRequest(method: "GET", url: server.url("/v2/flood")))
        var received = 0
        for try await chunk in head.body {
            received += chunk.count
            try await Task.sleep(nanoseconds: 20_000_000)
            if received > 4 * 1024 * 1024 { break }
        }
        let sent: JSONValue = try await ProfirestApi(options: .init(baseURL: server.baseURL, transport: transport)).get("/flood-sent")
        let serverSent = sent["sent"]?.intValue ?? 0
        // Loopback socket buffers take a few MB at most; without the pause the server would have sent far more.
        XCTAssertLessThan(serverSent - received, 24 * 1024 * 1024, "sent \(serverSent), read \(received)")
        XCTAssertGreaterThan(received, 4 * 1024 * 1024)
    }

    /// A reader that never quite catches up — the transfer always a chunk ahead, as behind a flood — keeps nothing it
    /// has read: each chunk is let go once taken, not when the buffer next runs empty (which a flood never lets it:
    /// `make bench` saw the watcher grow by the whole stream, 211 MB over 1 000 000 events).
    func testChunksTheReaderTookAreLetGoWhileTheBufferNeverEmpties() async throws {
        let released = Locked(0)
        func chunk() -> Data {
            let bytes = UnsafeMutableRawPointer.allocate(byteCount: 1024, alignment: 1)
            return Data(bytesNoCopy: bytes, count: 1024, deallocator: .custom { pointer, _ in
                pointer.deallocate()
                released.withLock { $0 += 1 }
            })
        }
        let body = CurlStreamBody(limit: 1 << 20, resume: {}, cancel: {})
        var iterator = body.sequence(keeping: []).makeAsyncIterator()
        XCTAssertTrue(body.offer(chunk()))
        for _ in 0..<2_000 {
            XCTAssertTrue(body.offer(chunk()))  // one more before each read: the buffer never empties
            let read = try await iterator.next()
            XCTAssertEqual(read?.count, 1024)
        }
        XCTAssertEqual(released.withLock { $0 }, 2_000, "every chunk read is released; the one unread is kept")
    }

    /// Requests cancelled as they complete, 64 at a time, at least 10,000 of them: no crash, no stall, no transfer
    /// left behind (FoundationNetworking could crash the process on this: "a task that in not in the registry").
    func testTenThousandCancellationsLeaveNothingBehind() throws {
        // From before the request goes out to well after its answer: 0-10 ms of spinning (64 spinning workers keep
        // both cores busy, so an answer takes longer than alone).
        let race = CancellationRace(rounds: 157, maxSpin: 10_000_000)
        let outcome = race.run(try CurlTransport(), HTTPRequest(method: "GET", url: server.url("/v2/staff")))
        XCTAssertEqual(outcome.answered + outcome.cancelled, 64 * 157)
        XCTAssertGreaterThan(outcome.answered, 0)
        XCTAssertGreaterThan(outcome.cancelled, 0)
        XCTAssertEqual(outcome.afterwards, 200)
        // Every transfer ended and was freed (its easy handle with it); a little time for the last releases.
        let deadline = Date().addingTimeInterval(30)
        while CurlTransfer.alive.withLock({ $0 }) > 0, Date() < deadline { usleep(10_000) }
        XCTAssertEqual(CurlTransfer.alive.withLock { $0 }, 0, "transfers left behind")
    }

    /// Bad certificates are refused when the transport is made, with what is wrong.
    func testUnusableCertificatesAreAUsageErrorAtConstruction() throws {
        for (certificates, expected) in [
            (TrustedCertificates.pem(Data("not a certificate".utf8)), "holds no PEM certificate"),
            (.pem(Data("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n".utf8)), "not valid base64 DER"),
            (.pemFile("/nonexistent/ca.pem"), "cannot be read"),
        ] {
            XCTAssertThrowsError(try CurlTransport(trustedCertificates: certificates)) { error in
                let message = (error as? ProfirestUsageError)?.message ?? "\(error)"
                XCTAssertTrue(message.contains(expected), message)
            }
        }
    }

    /// Through the options, the same mistake fails every request with the usage error (the initializer of the
    /// client does not throw), without a retry.
    func testUnusableCertificatesInTheOptionsFailEveryRequest() async throws {
        let api = ProfirestApi(options: .init(baseURL: server.baseURL, trustedCertificates: .pem(Data("junk".utf8))))
        let error = await usageError { try await api.get("/staff") }
        XCTAssertTrue(error?.message.contains("holds no PEM certificate") == true, "\(String(describing: error))")
    }

    /// A libcurl that cannot be loaded, or one that lacks a function the transport needs: a clear reason, so the
    /// default transport can fall back with one line to the observer.
    func testALibcurlThatCannotBeUsedIsReported() {
        XCTAssertTrue(LibCurl.lookup(["libprofirest-none.so.9"], keep: false)?.message.contains("could not be loaded") == true)
        let noCurl = LibCurl.lookup(["libz.so.1"], keep: false)?.message ?? ""
        XCTAssertTrue(noCurl.contains("has no curl_global_init"), noCurl)
        XCTAssertNil(LibCurl.lookup(LibCurl.names, keep: false))
        XCTAssertNotNil(CurlTransport.version)
    }

    /// Without libcurl the default transport is URLSession, said once to the observer.
    func testTheDefaultFallsBackToURLSessionWithOneLine() {
        let events = Locked([ProfirestEvent]())
        let transport = DefaultTransport.make(
            trusting: nil, observe: { event in events.withLock { $0.append(event) } },
            curl: { _ in throw LibCurl.LoadFailure(message: "libcurl could not be loaded (test)") })
        XCTAssertTrue(transport is URLSessionTransport)
        XCTAssertEqual(events.withLock { $0 }, [.transportFallback(reason: "libcurl could not be loaded (test)")])
        XCTAssertEqual("\(events.withLock { $0 }[0])", "transport: libcurl could not be loaded (test); using URLSessionTransport")
        XCTAssertTrue(DefaultTransport.make(trusting: nil, observe: nil) is CurlTransport)
    }

    /// Without libcurl, certificates to trust cannot go to Linux URLSession (it has no trust setting, and no
    /// `init(trustedCertificates:)` here): every request says so and names CurlTransport; unreadable ones say that.
    func testWithoutCurlCertificatesToTrustAreAUsageErrorOnEveryRequest() async {
        let der = CertificateShapeTests.smallestShape.base64EncodedString()  // reads as a certificate
        let readable = TrustedCertificates.pem(Data("-----BEGIN CERTIFICATE-----\n\(der)\n-----END CERTIFICATE-----\n".utf8))
        for (certificates, expected) in [
            (readable, "use CurlTransport(trustedCertificates:)"), (.pemFile("/nonexistent/ca.pem"), "cannot be read"),
        ] {
            let transport = DefaultTransport.make(
                trusting: certificates, observe: nil, curl: { _ in throw LibCurl.LoadFailure(message: "no libcurl (test)") })
            do {
                _ = try await transport.send(HTTPRequest(method: "GET", url: URL(string: "https://api.mujprofirest.cz/v2/x")!))
                XCTFail("a request went out with certificates the transport cannot trust")
            } catch let error as ProfirestUsageError {
                XCTAssertTrue(error.message.contains(expected), error.message)
            } catch {
                XCTFail("\(error)")
            }
        }
    }

    /// The engine hands an ended transfer's easy handle, reset, to the next one (one after the other on one transport,
    /// the same handle): nothing of a request — method, body, headers, decoding, timeout — goes on to the next.
    func testAReusedHandleCarriesNothingOfTheRequestBefore() async throws {
        let transport = try CurlTransport()
        func echo(_ response: APIResponse) throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: response.data) }

        let put = try echo(await transport.send(HTTPRequest(
            method: "PUT", url: server.url("/v2/echo"),
            headers: ["X-One": "1", "Content-Type": "text/plain", "Accept": "text/plain", "Accept-Encoding": "identity",
                      "Expect": "nothing"],
            body: Data("put body".utf8))))
        XCTAssertEqual(put["method"]?.stringValue, "PUT")
        XCTAssertEqual(put["body_length"]?.intValue, 8)
        XCTAssertEqual(put["headers"]?["accept-encoding"]?.stringValue, "identity")

        // HEAD after the PUT: no body read, no method or body of the PUT's (a 302 with an empty body, not followed).
        let head = try await transport.send(HTTPRequest(method: "HEAD", url: server.url("/v2/redirect")))
        XCTAssertEqual(head.status, 302)
        XCTAssertEqual(head.header("Location"), "https://elsewhere.example/steal")

        let post = try echo(await transport.send(HTTPRequest(method: "POST", url: server.url("/v2/echo"), body: Data("{}".utf8))))
        XCTAssertEqual(post["method"]?.stringValue, "POST")
        XCTAssertEqual(post["body_length"]?.intValue, 2)
        XCTAssertEqual(Set((post["headers"]?.objectValue ?? [:]).keys), ["host", "content-length", "accept-encoding"])

        // The GET after them all: a GET with no body, only its own headers, libcurl's own encodings offered again.
        let get = try echo(await transport.send(HTTPRequest(method: "GET", url: server.url("/v2/echo"))))
        XCTAssertEqual(get["method"]?.stringValue, "GET")
        XCTAssertEqual(get["body_length"]?.intValue, 0)
        let headers = get["headers"]?.objectValue ?? [:]
        XCTAssertEqual(Set(headers.keys), ["host", "accept-encoding"], "\(headers)")
        XCTAssertTrue(headers["accept-encoding"]?.stringValue?.contains("gzip") == true, "\(headers)")

        // A whole exchange's timeout (0.5 s) does not bound the stream after it, whose timeout is for its head alone.
        _ = try await transport.send(HTTPRequest(method: "GET", url: server.url("/v2/echo"), timeout: 0.5))
        let stream = try await transport.stream(HTTPRequest(
            method: "GET", url: server.url("/v2/slow-stream?seconds=1.2&interval=0.4"), timeout: 0.5))
        var received = Data()
        for try await chunk in stream.body { received += chunk }
        XCTAssertTrue(String(decoding: received, as: UTF8.self).contains("frame 2"), String(decoding: received, as: UTF8.self))
    }
}

#endif

#if os(Linux)
/// A forward proxy that wants its own login (407): over plain http the 407 is the answer; for https the proxy refuses
/// the CONNECT tunnel, and the transport hands that 407 back too. Either way the library reports the proxy's login and
/// refreshes nothing.
final class ForwardProxyLoginTests: XCTestCase {
    var proxy: LoopbackServer!

    override func setUpWithError() throws { proxy = try LoopbackServer() }
    override func tearDown() { proxy?.stop() }

    func testA407FromAForwardProxyIsTheProxysLogin() async throws {
        let transport = try CurlTransport(proxy: proxy.url(""))
        for base in ["http://127.0.0.2:9", "https://api.profirest.invalid"] {
            let response = try await transport.send(HTTPRequest(method: "GET", url: URL(string: base + "/v2/connection")!))
            XCTAssertEqual(response.status, 407, base)
            let refreshed = Locked(false)
            let api = ProfirestApi(options: .init(
                baseURL: base, accessToken: "at_fixed_0123456789", transport: transport,
                observer: { if case .tokenRefreshed = $0 { refreshed.withLock { $0 = true } } }))
            let e = await apiError { _ = try await api.connection() }
            XCTAssertEqual(e?.code, ErrorCode.proxyAuthenticationRequired, base)
            XCTAssertEqual(e?.status, 407, base)
            XCTAssertFalse(refreshed.withLock { $0 })
        }
        XCTAssertThrowsError(try CurlTransport(proxy: URL(string: "socks9://x")!))
    }
}
#endif
