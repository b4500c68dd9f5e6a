import Foundation
import XCTest
@testable import ProfirestAPI
#if canImport(Glibc)
import Glibc
#endif

/// A closed port on this machine, through the transport a client gets by default: the error names the address and
/// the attempts made.
final class UnreachedServerIntegrationTests: XCTestCase {
    #if canImport(Glibc)
    /// A port on 127.0.0.1 that nothing listens on: bound by the system, then closed again.
    private func closedPort() throws -> Int {
        let (socket, port) = try CuttingServer.loopbackSocket(listening: false)
        close(socket)
        return port
    }

    func testAClosedLoopbackPortIsNamedWithTheAttemptsMade() async throws {
        let port = try closedPort()
        let api = ProfirestApi(options: .init(
            baseURL: "http://127.0.0.1:\(port)", accessToken: "at_fixed_0123456789", retries: 3, retryDelay: 0.05,
            timeout: 10))
        let e = await apiError { _ = try await api.get("/connection") }
        XCTAssertEqual(e?.code, ErrorCode.networkError)
        let detail = try XCTUnwrap(e?.detail)
        XCTAssertTrue(detail.hasPrefix("could not connect to 127.0.0.1:\(port) after 4 attempts over "), detail)
        XCTAssertFalse(detail.contains("at_fixed_0123456789"))
    }
    #endif
}
