import Foundation
import XCTest
@_spi(TransportTuning) @testable import ProfirestAPI

/// Writes over real loopback sockets through connections that die: every request the server sees carries
/// exactly the caller's bytes, every attempt under one Idempotency-Key the same bytes, and nothing stalls waiting
/// for a body (tools/loopback_server.py records each write's head as soon as it arrives).
final class WriteDeliveryTests: XCTestCase {
    var server: LoopbackServer!

    override func setUpWithError() throws { server = try LoopbackServer() }
    override func tearDown() { server?.stop() }

    /// A JSON object, an opaque binary body and an OAuth-style form: the three kinds of body the library sends.
    private let bodies: [(name: String, body: RequestBody, bytes: Data)] = {
        let json: JSONValue = ["note": "ahoj", "amount": 12]
        let binary = Data((0..<3000).map { UInt8($0 % 251) })
        let form = Data("grant_type=refresh_token&refresh_token=rt_x&client_id=c".utf8)
        return [
            ("json", .json(json), try! JSONCoding.encode(json)),
            ("binary", .data(binary, contentType: "application/zip"), binary),
            ("form", .data(form, contentType: "application/x-www-form-urlencoded"), form),
        ]
    }()

    private func writes(key: String) async throws -> [JSONValue] {
        let all: [JSONValue] = try await ProfirestApi(options: .init(baseURL: server.baseURL)).get("/writes")
        return all.filter { $0["key"]?.stringValue == key }
    }

    private func assertWhole(_ records: [JSONValue], bytes: Data, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(records.isEmpty, "\(what): the server saw no request", file: file, line: line)
        let sha = sha256Hex(bytes)
        for record in records {
            XCTAssertEqual(record["complete"]?.boolValue, true, "\(what): a request arrived without its whole body: \(record)", file: file, line: line)
            XCTAssertEqual(record["length"]?.intValue, bytes.count, "\(what): \(record)", file: file, line: line)
            XCTAssertEqual(record["sha256"]?.stringValue, sha, "\(what): other bytes under the same key", file: file, line: line)
        }
    }

    /// The race that made Linux URLSession re-send a write without its body: a kept-alive connection the server
    /// closes when the write arrives on it. A write now never goes out on a reused connection, so it is answered
    /// at once, whole, and the server sees it once.
    func testAWriteNeverGoesOutOnAConnectionTheServerMayHaveDropped() async throws {
        for reuse in [URLSessionTransport.ConnectionPolicy.keepAlive, .platformDefault] {
            let api = ProfirestApi(options: .init(
                baseURL: server.baseURL, retries: 0, timeout: 30, transport: URLSessionTransport(policy: reuse)))
            for (name, body, bytes) in bodies {
                let _: JSONValue = try await api.get("/echo")  // a kept-alive connection to reuse
                let key = "reused-\(name)-\(reuse)"
                let started = Date()
                let answer = try await api.post("/write-drop-if-reused", body: body, options: .init(idempotencyKey: .key(key)))
                XCTAssertLessThan(Date().timeIntervalSince(started), 15, "\(name): the write stalled (waited out the 30 s timeout)")
                XCTAssertEqual(answer?["length"]?.intValue, bytes.count)
                let records = try await writes(key: key)
                XCTAssertEqual(records.count, 1, "\(name): sent once")
                assertWhole(records, bytes: bytes, name)
                XCTAssertEqual(records.first?["first"]?.boolValue, true, "\(name): a write opens its own connection")
            }
        }
    }

    /// libcurl keeps a write's connection: when the server drops a reused connection with the write on it, libcurl
    /// sends the write again on a new connection, with its whole body, and the caller gets the answer at once.
    func testACurlWriteOnADroppedReusedConnectionGoesAgainWhole() async throws {
        #if os(Linux)
        let api = ProfirestApi(options: .init(baseURL: server.baseURL, retries: 0, timeout: 30, transport: try CurlTransport()))
        for (name, body, bytes) in bodies {
            let _: JSONValue = try await api.get("/echo")  // a kept-alive connection to reuse
            let key = "curl-reused-\(name)"
            let started = Date()
            let answer = try await api.post("/write-drop-if-reused", body: body, options: .init(idempotencyKey: .key(key)))
            XCTAssertLessThan(Date().timeIntervalSince(started), 15, "\(name): the write stalled (waited out the 30 s timeout)")
            XCTAssertEqual(answer?["length"]?.intValue, bytes.count)
            let records = try await writes(key: key)
            XCTAssertEqual(records.count, 2, "\(name): on the reused connection, then on a new one")
            assertWhole(records, bytes: bytes, name)
            XCTAssertEqual(records.first?["first"]?.boolValue, false, "\(name): the write went on the kept connection")
            XCTAssertEqual(records.last?["first"]?.boolValue, true, "\(name): and again on a new one")
        }
        #endif
    }

    /// A server that reads a write and closes without answering: the library sends it again, with the same key and
    /// the same bytes, and gets the answer.
    func testAWriteWhoseAnswerWasLostGoesAgainWithTheSameBytes() async throws {
        for kind in TransportKind.available {
        let api = ProfirestApi(options: .init(
            baseURL: server.baseURL, retries: 2, timeout: 30, transport: kind.make(), sleep: { _ in }))
        for (name, body, bytes) in bodies {
            let key = "lost-\(name)-\(kind)"
            let started = Date()
            let answer = try await api.post("/write-drop-first", body: body, options: .init(idempotencyKey: .key(key)))
            XCTAssertLessThan(Date().timeIntervalSince(started), 15, "\(name): the retry stalled (waited out the 30 s timeout)")
            XCTAssertEqual(answer?["length"]?.intValue, bytes.count)
            let records = try await writes(key: key)
            XCTAssertEqual(records.count, 2, "\(name): the dropped attempt and its retry")
            assertWhole(records, bytes: bytes, name)
        }
        }
    }

    /// Writes in a row against a server that closes each connection 2 ms after answering, at pauses around that
    /// moment: each arrives whole and is answered.
    func testWritesRacingAConnectionThatClosesAfterEachAnswerAllArriveWhole() async throws {
        let transports: [(String, any HTTPTransport)] =
            [("urlSession keepAlive", URLSessionTransport(policy: .keepAlive))]
            + TransportKind.available.filter { $0 == .curl }.map { ("curl", $0.make()) }
        for (kindName, transport) in transports {
        let api = ProfirestApi(options: .init(baseURL: server.baseURL, retries: 3, timeout: 30, transport: transport, sleep: { _ in }))
        let started = Date()
        for i in 0..<24 {
            let (name, body, bytes) = bodies[i % bodies.count]
            let key = "race-\(i)-\(kindName)"
            let answer = try await api.post("/write-close-soon", body: body, options: .init(idempotencyKey: .key(key)))
            XCTAssertEqual(answer?["length"]?.intValue, bytes.count)
            assertWhole(try await writes(key: key), bytes: bytes, "\(name) #\(i)")
            try await Task.sleep(nanoseconds: UInt64(i % 5) * 1_000_000)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 25, "\(kindName): no write waited out its 30 s timeout")
        }
    }

    /// A 401 with `WWW-Authenticate: Basic` comes back at once (Linux URLSession used to wait on the challenge
    /// until the attempt's timeout): from the transport, from an API call, from the stream and from OAuth.
    func testABasicChallengeIsAnsweredAtOnce() async throws {
        for kind in TransportKind.available {
        let transport = kind.make()
        var started = Date()
        let response = try await transport.send(HTTPRequest(method: "GET", url: server.url("/v2/basic-401"), timeout: 30))
        XCTAssertEqual(response.status, 401)
        if kind == .curl {
            // libcurl hands the 401 over with its body (Linux URLSession can only drop it: see AuthChallenge).
            XCTAssertEqual(response.data, Data(#"{"error":"invalid_client","error_description":"bad secret"}"#.utf8))
        }
        XCTAssertEqual(response.header("www-authenticate"), "Basic realm=\"profirest\"")
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)

        started = Date()
        let streamed = try await transport.stream(HTTPRequest(method: "GET", url: server.url("/v2/basic-401"), timeout: 30))
        XCTAssertEqual(streamed.status, 401)
        for try await _ in streamed.body {}
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)

        let api = ProfirestApi(options: .init(
            baseURL: server.baseURL, clientID: "partner", clientSecret: "wrong-secret", timeout: 30, transport: transport))
        started = Date()
        let e = await apiError { try await api.get("/basic-401") }
        XCTAssertEqual(e?.status, 401)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)

        started = Date()
        do {
            _ = try await api.pair(scope: "restaurants:read")
            XCTFail("a 401 from the OAuth endpoint is an error")
        } catch let error as ProfirestOAuthError {
            XCTAssertEqual(error.error, "invalid_client")
            XCTAssertFalse(error.message.contains("wrong-secret"))
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "invalid_client, not a 30 s timeout")
        }
    }
}

private func sha256Hex(_ data: Data) -> String {
    Crypto.sha256(data).map { String(format: "%02x", $0) }.joined()
}
