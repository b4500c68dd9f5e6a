import Foundation
import XCTest
@testable import ProfirestAPI

/// Compressed answers on every transport, over real loopback sockets (tools/loopback_server.py): each encoding the
/// machine's libcurl was built with is asked for and decoded, a caller's own `Accept-Encoding` is left alone, a
/// compressed stream stays live, and a body that is not what its Content-Encoding says is `invalid_response`.
final class CompressedAnswersTests: XCTestCase {
    var server: LoopbackServer!

    override func setUpWithError() throws { server = try LoopbackServer() }
    override func tearDown() { server?.stop() }

    /// The encodings libcurl decodes here: gzip and deflate always (zlib), br and zstd when its version line names
    /// their libraries — URLSession on Linux reads answers through the same libcurl.
    static var encodings: [String] {
        var encodings = ["gzip", "deflate"]
        #if os(Linux) && !PROFIREST_NO_CURL
        let version = (try? LibCurl.load()) ?? ""
        if version.contains("brotli/") { encodings.append("br") }
        if version.contains("zstd/") { encodings.append("zstd") }
        #else
        encodings.append("br")
        #endif
        return encodings
    }

    func testEveryEncodingIsAskedForAndDecodedOnEveryTransport() async throws {
        #if os(Linux) && !PROFIREST_NO_CURL
        // This machine's libcurl (Debian 12's) has all four; a test that silently covered two would prove less.
        let version = try LibCurl.load()
        XCTAssertEqual(Self.encodings, ["gzip", "deflate", "br", "zstd"], version)
        #endif
        for kind in TransportKind.available {
            let api = ProfirestApi(options: .init(baseURL: server.baseURL, transport: kind.make()))
            for encoding in Self.encodings + ["identity"] {
                let options = RequestOptions(query: ["encoding": .string(encoding)])
                let page = try await api.get("/encoded", as: StaffMemberPage.self, options: options)
                XCTAssertEqual(page.data.count, 11, "\(kind) \(encoding)")
                XCTAssertEqual(page.data.first?.name, "Zaměstnanec číslo 1", "\(kind) \(encoding)")
            }
            let response = try await kind.make().send(HTTPRequest(method: "GET", url: server.url("/v2/encoded?encoding=gzip")))
            let offered = Set((response.header("X-Seen-Accept-Encoding") ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            })
            XCTAssertTrue(offered.isSuperset(of: ["gzip", "deflate"]), "\(kind) offered \(offered)")
            if kind == .curl { XCTAssertEqual(offered, Set(Self.encodings), "\(kind) offers what its libcurl decodes") }
            XCTAssertEqual(try JSONDecoder().decode(StaffMemberPage.self, from: response.data).data.count, 11, "\(kind)")
        }
    }

    /// A caller who sets `Accept-Encoding` chose the encodings: the header goes as set (alone: libcurl's own offer
    /// is not added), and the answer comes decoded on both transports, as URLSession has always done.
    func testACallersAcceptEncodingIsLeftAlone() async throws {
        for kind in TransportKind.available {
            let request = HTTPRequest(
                method: "GET", url: server.url("/v2/encoded?encoding=gzip"), headers: ["Accept-Encoding": "gzip"])
            let response = try await kind.make().send(request)
            XCTAssertEqual(response.header("X-Seen-Accept-Encoding"), "gzip", "\(kind)")
            XCTAssertEqual(response.header("Content-Encoding"), "gzip", "\(kind): the head as the server sent it")
            XCTAssertEqual(try JSONDecoder().decode(StaffMemberPage.self, from: response.data).data.count, 11, "\(kind)")
            let identity = HTTPRequest(
                method: "GET", url: server.url("/v2/encoded?encoding=identity"), headers: ["Accept-Encoding": "identity"])
            let plain = try await kind.make().send(identity)
            XCTAssertEqual(plain.header("X-Seen-Accept-Encoding"), "identity", "\(kind)")
            XCTAssertEqual(try JSONDecoder().decode(StaffMemberPage.self, from: plain.data).data.count, 11, "\(kind)")
        }
    }

    /// A stream in gzip, flushed after each event, is decoded as it comes: the first event is read while the server
    /// still holds the connection open.
    func testACompressedStreamStaysLive() async throws {
        for kind in TransportKind.available {
            let streaming = try await kind.make().stream(HTTPRequest(
                method: "GET", url: server.url("/v2/encoded-stream"), timeout: 10))
            XCTAssertEqual(streaming.status, 200, "\(kind)")
            // The server never ends this answer: a transport that does not decode would leave the loop waiting, so
            // the body is closed after 10 s whatever came.
            let body = streaming.body
            let deadline = Task {
                try await Task.sleep(nanoseconds: 10_000_000_000)
                await body.close()
            }
            var text = ""
            do {
                for try await chunk in body {
                    text += String(decoding: chunk, as: UTF8.self)
                    if text.hasSuffix("\n\n") || text.utf8.count > 64 { break }
                }
            } catch {}
            deadline.cancel()
            XCTAssertEqual(text, "id: 1\ndata: frame 1\n\n", "\(kind)")
            await body.close()
        }
    }

    func testACorruptCompressedBodyIsAnInvalidResponse() async throws {
        for kind in TransportKind.available {
            let api = ProfirestApi(options: .init(baseURL: server.baseURL, retries: 0, transport: kind.make()))
            let error = await apiError {
                _ = try await api.get("/encoded", as: StaffMemberPage.self, options: .init(query: ["corrupt": "1"]))
            }
            XCTAssertEqual(error?.code, ErrorCode.invalidResponse, "\(kind): \(String(describing: error))")
            XCTAssertTrue(error?.detail?.contains("could not be decoded from its Content-Encoding") == true, error?.detail ?? "")
            if kind == .curl { XCTAssertTrue(error?.detail?.contains("Content-Encoding \"gzip\"") == true, error?.detail ?? "") }
        }
    }
}
