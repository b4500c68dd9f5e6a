#if os(Linux)
import AppleShims
#endif
import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// Several processes on one storage — one token file (`FileTokenStorage`), or, on Linux, the keychain of Apple
/// platforms (`KeychainTokenStorage` on the in-memory keychain, its items shared through a file as a device's keychain
/// is shared by an app and its extensions) locked through an app group's container: the single-use refresh token is
/// spent once, under the storage's lock, and a process killed while holding that lock does not stop the others.
/// The processes are `ProfirestRefreshProbe`, built next to the test bundle.
final class CrossProcessRefreshTests: XCTestCase {
    private var sandbox: SandboxServer!
    private var directory: TemporaryDirectory!
    private var file: String { directory.file("tokens.json") }

    /// Where the processes keep their tokens.
    private enum Location {
        /// One token file.
        case file
        /// The keychain's service `cz.profirest.crossprocess` in the app group `group.cz.profirest.tests`, whose
        /// container (the lock file's) is under the test's directory (Linux: the shim keychain).
        case keychain
    }

    private let service = "cz.profirest.crossprocess"
    private let appGroup = "group.cz.profirest.tests"

    override func setUp() async throws {
        sandbox = try SandboxServer.start()
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        sandbox?.stop()
        directory?.remove()
        #if os(Linux)
        InMemoryKeychain.shared.reset()
        AppGroupContainers.shared.reset()
        #endif
    }

    /// The probe's arguments naming the storage.
    private func storageArguments(_ location: Location) -> [String] {
        switch location {
        case .file:
            return ["--file", file]
        case .keychain:
            return [
                "--keychain", service, "--app-group", appGroup, "--containers", directory.file("containers"),
                "--keychain-file", directory.file("keychain.json"),
            ]
        }
    }

    /// The same storage in this process (to pair and to check it afterwards).
    private func storage(_ location: Location) -> any LockingTokenStorage {
        switch location {
        case .file:
            return FileTokenStorage(path: file)
        case .keychain:
            #if os(Linux)
            InMemoryKeychain.shared.shareItems(in: directory.file("keychain.json"))
            AppGroupContainers.shared.root = URL(fileURLWithPath: directory.file("containers"), isDirectory: true)
            return ShimKeychainStorage(service: service, appGroup: appGroup)
            #else
            // On Apple platforms the keychain needs an entitled app, which `swift test` is not.
            preconditionFailure("the keychain's cross-process tests run on Linux, on the in-memory keychain")
            #endif
        }
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

    private func calls(_ n: Int = 5, _ location: Location) throws -> Probe {
        try start(
            ["calls", "--base", sandbox.api, "--client", "profirest-pos", "--calls", String(n)]
                + storageArguments(location))
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

    /// The storage's state document must hold the new tokens (the token file: one JSON object whose state document
    /// does).
    private func assertTheStorageIsValid(_ location: Location, file: StaticString = #filePath, line: UInt = #line) throws {
        if location == .file {
            let text = try String(contentsOfFile: self.file, encoding: .utf8)
            XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String], file: file, line: line)
        }
        let document = try XCTUnwrap(try storage(location).get("profirest-api:profirest-pos"), file: file, line: line)
        let state = try StoredState.decode(document, location: "test")
        XCTAssertTrue(state.hasTokens, file: file, line: line)
    }

    func testEightProcessesOnAnExpiredTokenRefreshExactlyOnce() async throws {
        try await eightProcessesOnAnExpiredTokenRefreshExactlyOnce(.file)
    }

    func testAProcessKilledWhileHoldingTheLockDoesNotStopTheOthers() async throws {
        try await aProcessKilledWhileHoldingTheLockDoesNotStopTheOthers(.file)
    }

    #if os(Linux)
    /// An app, its widget and its intents — eight processes — on one keychain item with an app group: one refresh.
    /// (The processes start some milliseconds apart, so they seldom overlap: this holds them to one refresh and no
    /// replay; the killed holder's test below is the one that tells a lock across processes from none.)
    func testEightProcessesSharingTheKeychainThroughAnAppGroupRefreshExactlyOnce() async throws {
        try await eightProcessesOnAnExpiredTokenRefreshExactlyOnce(.keychain)
        let lockFile = directory.file("containers/\(appGroup)/ProfirestAPI-\(service).lock")
        XCTAssertTrue(FileManager.default.fileExists(atPath: lockFile), "the lock file is in the group's container")
    }

    /// Fails when the probes' keychain storage has no app group (checked by hand: one refresh while the holder held
    /// the lock): the group's lock file is what they wait for.
    func testAProcessKilledWhileHoldingTheKeychainLockDoesNotStopTheOthers() async throws {
        try await aProcessKilledWhileHoldingTheLockDoesNotStopTheOthers(.keychain)
    }
    #endif

    private func eightProcessesOnAnExpiredTokenRefreshExactlyOnce(_ location: Location) async throws {
        _ = try probeExecutable()
        try await sandbox.pairDevice(clientID: "profirest-pos", storage: storage(location))
        try await sandbox.admin("POST", "tokens/expire", [:])
        let probes = try (0..<8).map { _ in try calls(5, location) }
        var results: [(status: Int32, summary: [String: Any])] = []
        for probe in probes { results.append(await probe.finished()) }
        assertAllSucceeded(results, calls: 5)
        let refreshes = try await sandbox.refreshes("profirest-pos")
        XCTAssertEqual(refreshes, 1)
        let stats = try await sandbox.admin("GET", "stats")
        XCTAssertEqual(stats["refresh_reuse"]?.intValue, 0, "no process spent an already used refresh token (invalid_grant)")
        // The server's grace forgives a repeat within a minute (it answers the same new tokens again): only this shows
        // that every other process waited for the lock and read the new tokens instead of presenting the spent one.
        XCTAssertEqual(stats["refresh_replays"]?.intValue, 0, "no process presented the refresh token another had spent")
        try assertTheStorageIsValid(location)
    }

    private func aProcessKilledWhileHoldingTheLockDoesNotStopTheOthers(_ location: Location) async throws {
        _ = try probeExecutable()
        try await sandbox.pairDevice(clientID: "profirest-pos", storage: storage(location))
        let holder = try start(["hold-lock", "--seconds", "60"] + storageArguments(location))
        XCTAssertEqual(holder.firstLine()["locked"] as? Bool, true)
        try await sandbox.admin("POST", "tokens/expire", [:])
        let probes = try (0..<3).map { _ in try calls(3, location) }
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
        try assertTheStorageIsValid(location)
    }
}
