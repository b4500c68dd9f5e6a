import Foundation
import XCTest

/// tools/loopback_server.py in a child process, for tests of the URLSession transport over real sockets.
/// It exits when its stdin closes, so it never outlives the test process.
final class LoopbackServer {
    let process = Process()
    let stdin = Pipe()
    let port: Int

    init() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root.appendingPathComponent("tools/loopback_server.py").path]
        process.standardInput = stdin
        process.standardOutput = stdout
        do {
            try process.run()
        } catch {
            throw XCTSkip("python3 is needed for the loopback transport tests: \(error)")
        }
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let object = try JSONSerialization.jsonObject(with: line.prefix { $0 != UInt8(ascii: "\n") }) as? [String: Int]
        guard let port = object?["port"] else { throw XCTSkip("the loopback server did not start") }
        self.port = port
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func url(_ path: String) -> URL { URL(string: baseURL + path)! }

    func stop() {
        try? stdin.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
