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
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EBADF) }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
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
