import Foundation
import ProfirestAPI
import ProfirestTestSupport
import XCTest
@testable import ProfirestPostgres

/// The base of the PostgreSQL tests: the shared server, a table of the test's own (dropped afterwards), storages on
/// it, and the probe processes.
class PostgresTestCase: XCTestCase {
    var server: PostgresServer!
    var table = ""
    private var probes: [Probe] = []

    override func setUpWithError() throws {
        server = try PostgresServer.shared()
        table = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }

    override func tearDownWithError() throws {
        for probe in probes where probe.process.isRunning { ProcessControl.kill(probe.process) }
        if let server, !table.isEmpty, let admin = try? server.admin() {
            _ = admin.execute("DROP TABLE IF EXISTS \(table)")
        }
    }

    func storage(maximumConnections: Int = 8) throws -> PostgresTokenStorage {
        try PostgresTokenStorage(connectionString: server.connectionString, table: table, maximumConnections: maximumConnections)
    }

    /// A probe process (ProfirestRefreshProbe, built next to the tests) on this test's table, the password in its
    /// environment.
    func probe(_ mode: String, _ arguments: [String]) throws -> Probe {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try probeExecutable())
        process.arguments = [mode, "--postgres", server.connectionStringWithoutPassword, "--table", table] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["PGPASSWORD"] = server.password
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let probe = Probe(process: process, output: output)
        probes.append(probe)
        return probe
    }

    private func probeExecutable() throws -> String {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [here, Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL]
            .map { $0.appendingPathComponent("ProfirestRefreshProbe").path }
        guard let found = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            let reason = "ProfirestRefreshProbe is not built next to the tests (swift build builds it)"
            if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail(reason) }
            throw XCTSkip(reason)
        }
        return found
    }
}

/// A probe process and its output, one JSON object a line.
struct Probe {
    let process: Process
    let output: Pipe

    /// The first line it prints (hold-lock's {"locked": true}), waiting for it.
    func firstLine() -> [String: Any] {
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        return (try? JSONSerialization.jsonObject(with: line.prefix { $0 != UInt8(ascii: "\n") })) as? [String: Any] ?? [:]
    }

    /// Its last line once it has exited, and its exit status; a probe still running after `timeout` (generous: both
    /// cores may be busy) is killed, which fails the test that expected it to finish.
    func finished(timeout: TimeInterval = 300) -> (status: Int32, summary: [String: Any]) {
        let process = self.process
        let watchdog = DispatchWorkItem { if process.isRunning { ProcessControl.kill(process) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        defer { watchdog.cancel() }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let last = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? "{}"
        return (process.terminationStatus, (try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [String: Any] ?? [:])
    }
}

/// Collects failures from background threads so the test thread can assert on them.
final class Failures: @unchecked Sendable {
    // @unchecked: `list` is only touched while `lock` is held.
    private let lock = NSLock()
    private var list: [String] = []

    func record(_ error: Error) {
        lock.lock()
        list.append(String(describing: error))
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return list
    }
}

/// Runs `body` on `threads` real threads at once (blocking locks would starve the cooperative pool) and waits for
/// them; false when they did not all finish within `timeout` (generous: both cores may be busy).
func onThreads(_ threads: Int, timeout: TimeInterval = 300, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let group = DispatchGroup()
    for index in 0..<threads {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    return group.wait(timeout: .now() + timeout) == .success
}

/// The `StorageError` that `body` throws, failing the test when it throws something else or nothing.
func storageError(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> StorageError? {
    do {
        try body()
        XCTFail("expected a StorageError", file: file, line: line)
    } catch let error as StorageError {
        return error
    } catch {
        XCTFail("expected a StorageError, got \(error)", file: file, line: line)
    }
    return nil
}
