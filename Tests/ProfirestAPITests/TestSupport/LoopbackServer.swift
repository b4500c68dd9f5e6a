import Foundation
import ProfirestTestSupport
import XCTest

/// tools/loopback_server.py in a child process, for tests of the URLSession transport over real sockets.
/// It exits when its stdin closes, so it never outlives the test process.
final class LoopbackServer {
    let server: ChildServer
    let port: Int

    /// - Parameter host: the address to listen on: 127.0.0.1, or ::1 for the IPv6 loopback.
    init(host: String = "127.0.0.1") throws {
        let root = packageRoot
        do {
            server = try ChildServer(
                executable: "/usr/bin/env",
                arguments: ["python3", root.appendingPathComponent("tools/loopback_server.py").path, "--host", host])
        } catch {
            throw Self.unavailable("python3 is needed for the loopback transport tests: \(error)")
        }
        guard let port = server.announcement["port"] as? Int else {
            server.stop()
            throw Self.unavailable("the loopback server did not start: \(server.announcement)")
        }
        self.port = port
    }

    /// A skip on a developer's machine; under `CI=true` a failure, like a missing sandbox.
    private static func unavailable(_ reason: String) -> Error {
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            XCTFail(reason)
            return ProfirestTestFailure(reason)
        }
        return XCTSkip(reason)
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func url(_ path: String) -> URL { URL(string: baseURL + path)! }

    func stop() { server.stop() }
}
