import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// One answer cannot take the device's memory: a body past `maxResponseBytes` ends as `response_too_large`, not
/// retried; libcurl and URLSession stop reading at the limit, and a Content-Length past it fails before the body is
/// read.
final class AnswerSizeLimitTests: XCTestCase {
    func testAnAnswerPastTheLimitIsResponseTooLargeAndNotRetried() async throws {
        let big = Step.respond(APIResponse(status: 200, headers: ["Content-Type": "application/json"], data: Data(count: 2048)))
        let h = Harness([big, big])
        let api = ProfirestApi(options: .init(
            baseURL: "https://api.mujprofirest.cz", accessToken: "at_test", transport: h.transport, maxResponseBytes: 1024))
        let e = await apiError { try await api.get("/restaurants/11/orders") }
        XCTAssertEqual(e?.code, ErrorCode.responseTooLarge)
        XCTAssertEqual(e?.retryable, false)
        XCTAssertEqual(h.requests.count, 1)
        XCTAssertEqual(h.requests.first?.maxResponseBytes, 1024)
        // A download raises it for itself.
        let data = try await api.getData("/restaurants/11/backups/b1", options: .init(maxResponseBytes: 4096))
        XCTAssertEqual(data?.count, 2048)
    }

    func testTheDefaultIs64MiB() {
        XCTAssertEqual(ProfirestApi.Options().maxResponseBytes, 64 << 20)
    }

    #if os(Linux)
    private static func head(_ extra: String) -> Data {
        Data("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\(extra)\r\n".utf8)
    }

    /// The server declares 10 GB and sends a few bytes, then waits: only refusing at the head ends this at once.
    func testCurlRefusesADeclaredLengthPastTheLimitBeforeReadingTheBody() async throws {
        try await assertRefusedBeforeTheTimeout(Self.declaredTooLong, "ended at the head, not by the timeout", .curl)
    }

    /// A chunked answer without a length that goes on past the limit: libcurl stops reading there.
    func testCurlStopsReadingAtTheLimit() async throws {
        try await assertRefusedBeforeTheTimeout(Self.chunkedPastTheLimit, "ended at the limit, not by the timeout", .curl)
    }

    /// URLSession: its delegate refuses the head's Content-Length (`completionHandler(.cancel)`).
    func testURLSessionRefusesADeclaredLengthPastTheLimitBeforeReadingTheBody() async throws {
        try await assertRefusedBeforeTheTimeout(Self.declaredTooLong, "ended at the head, not by the timeout", .urlSession)
    }

    /// URLSession: its delegate counts the bytes as they arrive and cancels the task past the limit.
    func testURLSessionStopsReadingAtTheLimit() async throws {
        try await assertRefusedBeforeTheTimeout(
            Self.chunkedPastTheLimit, "ended at the limit, not by the timeout", .urlSession)
    }

    private static let declaredTooLong = head("Content-Length: 10000000000\r\n") + Data(repeating: 0x20, count: 100)

    private static var chunkedPastTheLimit: Data {
        var answer = head("Transfer-Encoding: chunked\r\n")
        let chunk = Data(repeating: 0x61, count: 65536)
        for _ in 0..<64 { answer += Data("10000\r\n".utf8) + chunk + Data("\r\n".utf8) }
        return answer
    }

    /// `answer` sent whole by a server that then holds the connection open, to a 1 MiB limit through `kind`: it must
    /// end as `response_too_large` well before the 60 s timeout.
    private func assertRefusedBeforeTheTimeout(
        _ answer: Data, _ message: String, _ kind: TransportKind, file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let server = try CuttingServer(answer: answer, cut: answer.count, holdOpen: true)
        defer { server.stop() }
        let api = ProfirestApi(options: .init(
            baseURL: server.baseURL, retries: 0, timeout: 60, transport: kind.make(), maxResponseBytes: 1 << 20))
        let started = Date()
        let e = await apiError { try await api.get("/x") }
        XCTAssertEqual(e?.code, ErrorCode.responseTooLarge, file: file, line: line)
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, message, file: file, line: line)
    }
    #endif
}
