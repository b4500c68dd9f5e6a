import Foundation
import XCTest
@testable import ProfirestAPI

/// RFC 9110 §9.2.2 over real sockets, for both transports: an answer cut off at every point of a response — before
/// the status line, in the head, in a Content-Length body, in a chunked body — is retried only for a request the
/// server may get twice; a connection that was never made is retried for every method.
final class CutAnswerRetryTests: XCTestCase {
    private static let body = Data(("{\"data\":\"" + String(repeating: "x", count: 200) + "\"}").utf8)
    private static let lengthHead = Data(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
    private static let chunkedHead = Data(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
    private static let chunked: Data = {
        var out = chunkedHead
        var rest = body[...]
        while !rest.isEmpty {
            let piece = rest.prefix(64)
            out += Data((String(piece.count, radix: 16) + "\r\n").utf8) + piece + Data("\r\n".utf8)
            rest = rest.dropFirst(piece.count)
        }
        return out + Data("0\r\n\r\n".utf8)
    }()

    /// Where the answer breaks off: (name, answer, bytes of it the server sends, whether the head was complete).
    private static let cuts: [(String, Data, Int)] = [
        ("before the status line", lengthHead + body, 0),
        ("in the status line", lengthHead + body, 7),
        ("in the headers", lengthHead + body, lengthHead.count / 2),
        ("after the head", lengthHead + body, lengthHead.count),
        ("in a Content-Length body", lengthHead + body, lengthHead.count + 50),
        ("in a chunked body's first chunk", chunked, chunkedHead.count + 10),
        ("between chunks", chunked, chunkedHead.count + 4 + 64 + 2),
    ]

    private static let calls: [(name: String, method: String, options: RequestOptions, safe: Bool)] = [
        ("GET", "GET", .init(), true),
        ("POST with a key", "POST", .init(), true),
        ("POST without a key", "POST", .init(idempotencyKey: .none), false),
        ("PUT", "PUT", .init(), true),
        ("PATCH", "PATCH", .init(), false),
        ("PATCH with If-Match", "PATCH", .init(ifMatch: "\"v1\""), true),
        ("DELETE", "DELETE", .init(), true),
    ]

    private func client(_ baseURL: String, _ transport: any HTTPTransport) -> ProfirestApi {
        ProfirestApi(options: .init(baseURL: baseURL, retries: 2, timeout: 20, transport: transport, sleep: { _ in }))
    }

    func testAnAnswerCutAnywhereIsResentOnlyWhenTheServerMayGetItTwice() async throws {
        for kind in TransportKind.available {
            for (cutName, answer, cut) in Self.cuts {
                #if os(Linux)
                // FoundationNetworking traps on a connection closed before the head's end ("Transfer completed, but
                // there's no response", NativeProtocol.swift): CurlTransport is Linux's default for such reasons.
                if kind == .urlSession, cut < Self.lengthHead.count { continue }
                #endif
                for call in Self.calls {
                    let server = try CuttingServer(answer: answer, cut: cut)
                    defer { server.stop() }
                    let api = client(server.baseURL, kind.make())
                    let body: RequestBody? = call.method == "GET" ? nil : .json(["a": 1])
                    let what = "\(kind), \(call.name), cut \(cutName)"
                    let e = await apiError {
                        let _: JSONValue? = try await api.request(call.method, "/x", body: body, options: call.options)
                    }
                    XCTAssertEqual(e?.code, ErrorCode.networkError, what)
                    XCTAssertEqual(server.requests.count, call.safe ? 3 : 1, "\(what): \(e?.detail ?? "")")
                }
            }
        }
    }

    /// Counts the attempts a transport is given: a refused connection leaves no trace at a server.
    private final class Counting: HTTPTransport, @unchecked Sendable {
        let inner: any HTTPTransport
        private let lock = NSLock()
        private var sent = 0
        init(_ inner: any HTTPTransport) { self.inner = inner }
        var count: Int { lock.withLock { sent } }
        func send(_ request: HTTPRequest) async throws -> APIResponse {
            lock.withLock { sent += 1 }
            return try await inner.send(request)
        }
    }

    func testARefusedConnectionIsRetriedForEveryMethod() async throws {
        // A port nobody listens on: a server's, stopped.
        let closed = try CuttingServer(answer: Data(), cut: 0)
        closed.stop()
        for kind in TransportKind.available {
            for call in Self.calls {
                let transport = Counting(kind.make())
                let api = client(closed.baseURL, transport)
                let body: RequestBody? = call.method == "GET" ? nil : .json(["a": 1])
                let e = await apiError {
                    let _: JSONValue? = try await api.request(call.method, "/x", body: body, options: call.options)
                }
                XCTAssertEqual(e?.code, ErrorCode.networkError, "\(kind), \(call.name)")
                XCTAssertEqual((e?.underlyingError as? URLError)?.code, .cannotConnectToHost, "\(kind), \(call.name)")
                XCTAssertEqual(transport.count, 3, "\(kind), \(call.name)")
            }
        }
    }
}
