import XCTest
@testable import ProfirestAPI
// POSIX only: the other process is util-linux flock(1) under /bin/sh, holding the same kernel lock (flock) that
// FileLock+POSIX takes. Windows' LockFileEx is tested against the WinSDK shims (PlatformShimsTests/WindowsFileTests).
#if !os(Windows)
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The lock against other processes. `fork` is unsafe in a Swift process, so the other process is a shell
/// holding `flock(1)` on the same lock file — the same kernel lock `FileTokenStorage` takes.
final class FileLockCrossProcessTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var path: String { directory.file("tokens.json") }

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/flock"), "needs util-linux flock")
    }

    override func tearDown() {
        directory.remove()
    }

    /// Starts `/bin/sh -c script sh args…` and returns once it printed its first line (its "ready").
    private func startHolder(_ script: String, _ args: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, "sh"] + args
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        XCTAssertEqual(line, "ready\n", "the holder took the lock")
        return process
    }

    /// Whether another process could take the lock right now (`flock -n` fails with 1 while it is held).
    private func lockIsFreeForOtherProcesses() throws -> Bool {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        probe.arguments = ["-n", path + ".lock", "true"]
        try probe.run()
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }

    /// Runs `withLock` on its own thread so a broken lock fails the test instead of hanging it.
    private func withLockOnThread(_ storage: FileTokenStorage, _ body: @escaping @Sendable () -> Void) -> Bool {
        let errors = ErrorBox()
        let finished = runOnThreads(1, timeout: 30) { _ in
            do { try storage.withLock("refresh", body) } catch { errors.record(error) }
        }
        XCTAssertEqual(errors.all, [])
        return finished
    }

    func testWithLockWaitsForAnotherProcessHoldingTheLock() throws {
        let marker = directory.file("released")
        // The holder writes the marker just before it exits, which releases the lock.
        let holder = try startHolder(
            #"exec 9>>"$1"; flock -x 9; echo ready; sleep 0.3; echo done > "$2""#, [path + ".lock", marker])
        let storage = FileTokenStorage(path: path)
        let sawMarker = ErrorBox()
        let finished = withLockOnThread(storage) {
            if !FileManager.default.fileExists(atPath: marker) {
                sawMarker.record(StorageError(kind: .lockFailed, path: marker, reason: "entered before release"))
            }
        }
        XCTAssertTrue(finished)
        XCTAssertEqual(sawMarker.all, [], "withLock must not enter while the other process holds the lock")
        holder.waitUntilExit()
        XCTAssertEqual(holder.terminationStatus, 0)
    }

    func testOtherProcessesAreExcludedWhileWithLockRuns() throws {
        let storage = FileTokenStorage(path: path)
        let heldInside = try storage.withLock("refresh") { try lockIsFreeForOtherProcesses() }
        XCTAssertFalse(heldInside)
        XCTAssertTrue(try lockIsFreeForOtherProcesses(), "released after the body")
    }

    func testHolderKilledWithSIGKILLReleasesTheLock() throws {
        let holder = try startHolder(#"exec 9>>"$1"; flock -x 9; echo ready; exec sleep 60"#, [path + ".lock"])
        XCTAssertFalse(try lockIsFreeForOtherProcesses(), "the holder has it")
        XCTAssertEqual(kill(holder.processIdentifier, SIGKILL), 0)
        holder.waitUntilExit()
        XCTAssertEqual(holder.terminationReason, .uncaughtSignal)
        let storage = FileTokenStorage(path: path)
        XCTAssertTrue(withLockOnThread(storage) {}, "the kernel released the dead holder's lock")
        XCTAssertEqual(try storage.withLock("refresh") { "ok" }, "ok")
    }
}
#endif
