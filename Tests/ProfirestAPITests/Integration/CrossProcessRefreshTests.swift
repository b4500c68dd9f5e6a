import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// Several processes on one token file (`FileTokenStorage`): the single-use refresh token is spent once, under
/// the file's lock, and a process killed while holding that lock does not stop the others.
/// The processes are `ProfirestRefreshProbe`, built next to the test bundle.
final class CrossProcessRefreshTests: XCTestCase {
    private var sandbox: SandboxServer!
    private var directory: TemporaryDirectory!
    private var file: String { directory.file("tokens.json") }

    override func setUp() async throws {
        sandbox = try SandboxServer.start()
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        sandbox?.stop()
        directory?.remove()
    }

    /// A probe process started with `arguments`; `finished` waits for its exit and parses its last line.
    private struct Probe {
        let process: Process
        let output: Pipe
        let exit: Task<Int32, Never>

        /// The first line it printed (the hold-lock mode's "locked"), read as it comes.
        func firstLine() -> [String: Any] {
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                line.append(chunk)
            }
            return (try? JSONSerialization.jsonObject(with: line.prefix { $0 != UInt8(ascii: "\n") })) as? [String: Any] ?? [:]
        }

        func finished() async -> (status: Int32, summary: [String: Any]) {
            let status = await exit.value
            let data = output.fileHandleForReading.readDataToEndOfFile()
            let last = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? "{}"
            let summary = (try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [String: Any] ?? [:]
            return (status, summary)
        }
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

    private func start(_ arguments: [String]) throws -> Probe {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try probeExecutable())
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let exited = Locked<CheckedContinuation<Int32, Never>?>(nil)
        let status = Locked<Int32?>(nil)
        process.terminationHandler = { p in
            let code = p.terminationStatus
            let waiter = exited.withLock { c -> CheckedContinuation<Int32, Never>? in
                status.withLock { $0 = code }
                defer { c = nil }
                return c
            }
            waiter?.resume(returning: code)
        }
        try process.run()
        let exit = Task {
            await withCheckedContinuation { (c: CheckedContinuation<Int32, Never>) in
                let already: Int32? = exited.withLock { slot in
                    if let code = status.withLock({ $0 }) { return code }
                    slot = c
                    return nil
                }
                if let already { c.resume(returning: already) }
            }
        }
        return Probe(process: process, output: output, exit: exit)
    }

    private func calls(_ n: Int = 5) throws -> Probe {
        try start(["calls", "--base", sandbox.api, "--file", file, "--client", "profirest-pos", "--calls", String(n)])
    }

    private func assertAllSucceeded(_ results: [(status: Int32, summary: [String: Any])], calls: Int,
                                    file: StaticString = #filePath, line: UInt = #line) {
        for (status, summary) in results {
            XCTAssertEqual(status, 0, file: file, line: line)
            XCTAssertEqual(summary["ok"] as? Int, calls, "\(summary)", file: file, line: line)
            XCTAssertEqual((summary["errors"] as? [String: Any])?.count, 0, "\(summary)", file: file, line: line)
            XCTAssertEqual(summary["paired"] as? Bool, true, file: file, line: line)
        }
    }

    /// The token file must be one JSON object whose state document has the new tokens.
    private func assertTheFileIsValid(file: StaticString = #filePath, line: UInt = #line) throws {
        let text = try String(contentsOfFile: self.file, encoding: .utf8)
        let outer = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String]
        let document = try XCTUnwrap(outer?["profirest-api:profirest-pos"], file: file, line: line)
        let state = try StoredState.decode(document, location: "test")
        XCTAssertTrue(state.hasTokens, file: file, line: line)
    }

    func testEightProcessesOnAnExpiredTokenRefreshExactlyOnce() async throws {
        _ = try probeExecutable()
        try await sandbox.pairDevice(clientID: "profirest-pos", storage: FileTokenStorage(path: file))
        try await sandbox.admin("POST", "tokens/expire", [:])
        let probes = try (0..<8).map { _ in try calls() }
        var results: [(status: Int32, summary: [String: Any])] = []
        for probe in probes { results.append(await probe.finished()) }
        assertAllSucceeded(results, calls: 5)
        let refreshes = try await sandbox.refreshes("profirest-pos")
        XCTAssertEqual(refreshes, 1)
        let reuse = try await sandbox.admin("GET", "stats")["refresh_reuse"]?.intValue
        XCTAssertEqual(reuse, 0, "no process spent an already used refresh token (invalid_grant)")
        try assertTheFileIsValid()
    }

    func testAProcessKilledWhileHoldingTheLockDoesNotStopTheOthers() async throws {
        _ = try probeExecutable()
        try await sandbox.pairDevice(clientID: "profirest-pos", storage: FileTokenStorage(path: file))
        let holder = try start(["hold-lock", "--file", file, "--seconds", "60"])
        XCTAssertEqual(holder.firstLine()["locked"] as? Bool, true)
        try await sandbox.admin("POST", "tokens/expire", [:])
        let probes = try (0..<3).map { _ in try calls(3) }
        // The probes got their 401 and now wait for the lock to refresh.
        let waiting = await waitUntil(30) {
            ((try? await self.sandbox.admin("GET", "stats")["requests"]?["GET /v2/connection"]?.intValue) ?? 0) >= 9
        }
        XCTAssertTrue(waiting)
        let refreshesWhileLocked = try await sandbox.refreshes("profirest-pos")
        XCTAssertEqual(refreshesWhileLocked, 0, "nobody refreshed while another process held the lock")
        ProcessControl.kill(holder.process)
        let killed = await holder.finished()
        XCTAssertNotEqual(killed.status, 0)
        var results: [(status: Int32, summary: [String: Any])] = []
        for probe in probes { results.append(await probe.finished()) }
        assertAllSucceeded(results, calls: 3)
        let refreshes = try await sandbox.refreshes("profirest-pos")
        XCTAssertEqual(refreshes, 1)
        try assertTheFileIsValid()
    }
}
