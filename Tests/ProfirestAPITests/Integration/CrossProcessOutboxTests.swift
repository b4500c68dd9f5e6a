import Foundation
import XCTest
@testable import ProfirestAPI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Two processes on one outbox file (`ProfirestRefreshProbe outbox`, built next to the tests), each handing in
/// customers and punches while it delivers what the file holds, against a sandbox that drops, fails and garbles a
/// fifth of the writes; one of them is killed with SIGKILL at a random moment. Counted from the sandbox's own
/// records: every write either process accepted is recorded once (a customer under its Idempotency-Key, a punch by
/// its id, reaching the server's handler once — so a batch was never sent again under another key), none twice.
final class CrossProcessOutboxTests: XCTestCase {
    private var sandbox: SandboxServer!
    private var directory: TemporaryDirectory!
    private var tokens: String { directory.file("tokens.json") }

    override func setUp() async throws {
        sandbox = try SandboxServer.start()
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        sandbox?.stop()
        directory?.remove()
    }

    /// A probe process whose output lines are collected as they come, so a test can kill it after some of them.
    private final class OutboxProbe: @unchecked Sendable {
        let process = Process()
        private let output = Pipe()
        private let lock = NSLock()
        private var collected: [String] = []
        private var finished = false

        init(_ executable: String, _ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let handle = output.fileHandleForReading
            Thread.detachNewThread { [self] in
                var pending = Data()
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    pending.append(chunk)
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                        pending = Data(pending[(newline + 1)...])
                        lock.withLock { collected.append(line) }
                    }
                }
                lock.withLock { finished = true }
            }
        }

        var lines: [String] { lock.withLock { collected } }
        var ended: Bool { lock.withLock { finished } }

        /// Waits until its output ended (it exited or was killed), at most `seconds`.
        func waitForEnd(_ seconds: TimeInterval) async -> Bool {
            await waitUntil(seconds) { self.ended }
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

    private func writer(_ outbox: String, prefix: String, writes: Int) throws -> OutboxProbe {
        try OutboxProbe(try probeExecutable(), [
            "outbox", "--base", sandbox.api, "--file", tokens, "--client", "profirest-dochazka", "--outbox", outbox,
            "--prefix", prefix, "--writes", String(writes),
        ])
    }

    func testTwoProcessesOnOneOutboxFileEitherKilledLoseAndDoubleNothing() async throws {
        _ = try probeExecutable()
        try await sandbox.pairDevice(clientID: "profirest-dochazka", storage: FileTokenStorage(path: tokens))
        try await sandbox.admin("POST", "faults", [
            "action": "random", "rate": 0.2, "method": "POST", "path": "/v2/*", "count": .null, "seed": 20,
            "mix": ["drop_before", "drop_after", "status:503", "status:429", "close_after_response", "garbage"],
        ])
        var accepted: [String] = []
        for (trial, killed) in ["first", "second"].enumerated() {
            let outbox = directory.file("outbox-\(trial).json")
            let one = try writer(outbox, prefix: "t\(trial)-one-", writes: 60)
            let two = try writer(outbox, prefix: "t\(trial)-two-", writes: 60)
            let victim = killed == "first" ? one : two
            let survivor = killed == "first" ? two : one
            // Killed once it has had some writes accepted (or ended), at a moment the test does not choose.
            let threshold = Int.random(in: 4...40)
            _ = await waitUntil(120) { victim.lines.count >= threshold || victim.ended }
            try await Task.sleep(nanoseconds: UInt64.random(in: 0...30_000_000))
            kill(victim.process.processIdentifier, SIGKILL)
            let victimEnded = await victim.waitForEnd(30)
            let survivorEnded = await survivor.waitForEnd(240)
            XCTAssertTrue(victimEnded && survivorEnded, "trial \(trial): the processes ended")
            XCTAssertEqual(survivor.lines.last, "{\"done\":true}", "trial \(trial): the survivor emptied the file")
            XCTAssertGreaterThan(victim.lines.count, 0, "trial \(trial): the killed process had writes accepted")
            accepted += (victim.lines + survivor.lines).filter { $0.hasPrefix("c ") || $0.hasPrefix("p ") }
            // What the killed one left is delivered by whoever opens the file next: here, this process.
            let api = sandbox.client(clientID: "profirest-dochazka", storage: FileTokenStorage(path: tokens))
            let rest = try api.outbox(path: outbox)
            _ = await waitUntil(60) { await rest.flush().count == 0 }
            XCTAssertEqual(rest.status.count, 0, "trial \(trial)")
        }
        try await sandbox.admin("DELETE", "faults")

        let ledger = try await sandbox.admin("GET", "commits?full=1")
        var commits: [String: Int] = [:]
        for (_, keys) in ledger["by_key"]?.objectValue ?? [:] {
            for (key, n) in keys.objectValue ?? [:] { commits[key, default: 0] += n.intValue ?? 0 }
        }
        let punchRequests = ledger["punch_requests"]?.objectValue ?? [:]
        let customers = accepted.filter { $0.hasPrefix("c ") }.map { String($0.dropFirst(2)) }
        let punches = accepted.filter { $0.hasPrefix("p ") }.map { String($0.dropFirst(2)) }
        XCTAssertGreaterThan(customers.count, 20)
        XCTAssertGreaterThan(punches.count, 20)
        XCTAssertEqual(customers.filter { commits[$0] == nil }, [], "customers lost")
        XCTAssertEqual(customers.filter { (commits[$0] ?? 0) > 1 }, [], "customers doubled")
        XCTAssertEqual(commits.filter { $0.key.hasPrefix("t") && $0.key.contains("-c-") && $0.value > 1 }.map(\.key), [],
                       "no customer of either process doubled, accepted or not")
        XCTAssertEqual(punches.filter { punchRequests[$0] == nil }, [], "punches lost")
        XCTAssertEqual(punchRequests.filter { ($0.value.intValue ?? 0) > 1 }.map(\.key), [], "punches sent twice")
        XCTAssertEqual(ledger["punches"]?["duplicated_ids"]?.intValue, 0)
        let mismatches = try await sandbox.admin("GET", "stats")["body_mismatch_under_key"]?.intValue
        XCTAssertEqual(mismatches, 0, "the same bytes under each key")
    }
}
