import AppleShims
import Foundation
import XCTest
@testable import PlatformShims
#if canImport(Glibc)
import Glibc
#endif

/// KeychainTokenStorage's lock (the library's file, compiled in PlatformShims against the Security and app-group
/// shims): with an app group, an exclusive flock on a file in the group's container; without one, this process's
/// threads only. The processes of a group refreshing once: CrossProcessRefreshTests, on the same storage.
final class KeychainLockTests: XCTestCase {
    private var root: URL!
    private let group = "group.cz.profirest.tests"
    private func service(_ name: String = #function) -> String { "cz.profirest.tests.\(name.filter(\.isLetter))" }

    override func setUpWithError() throws {
        InMemoryKeychain.shared.reset()
        AppGroupContainers.shared.reset()
        root = FileManager.default.temporaryDirectory.appendingPathComponent("keychain-lock-\(UUID().uuidString)")
        AppGroupContainers.shared.root = root
    }

    override func tearDown() {
        InMemoryKeychain.shared.reset()
        AppGroupContainers.shared.reset()
        try? FileManager.default.removeItem(at: root)
    }

    private func lockFile(_ service: String) -> String {
        root.appendingPathComponent(group).appendingPathComponent("ProfirestAPI-\(service).lock").path
    }

    func testWithAnAppGroupTheLockIsAFileInTheGroupsContainer() throws {
        let storage = KeychainTokenStorage(service: service(), appGroup: group)
        let value = try storage.withLock("tokens") { () throws -> String? in
            try storage.set("tokens", "t1")
            XCTAssertTrue(FileManager.default.fileExists(atPath: lockFile(storage.service)))
            return try storage.get("tokens")
        }
        XCTAssertEqual(value, "t1")
        let mode = try FileManager.default.attributesOfItem(atPath: lockFile(storage.service))[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600, "the lock file is the owner's alone")
    }

    /// Another process holding the group's lock file (a flock on an open file of its own, as here) is waited for, by
    /// `withLock` and by `withAsyncLock`, and the storage goes on once it lets go.
    func testAnotherHolderOfTheGroupsLockFileIsWaitedFor() async throws {
        let storage = KeychainTokenStorage(service: service(), appGroup: group)
        try storage.withLock("tokens") {}  // makes the container and the lock file
        let other = open(lockFile(storage.service), O_RDWR)
        XCTAssertGreaterThanOrEqual(other, 0)
        XCTAssertEqual(flock(other, LOCK_EX), 0)
        let entered = Locked([String]())
        let waiter = Thread {
            try? storage.withLock("tokens") { entered.withLock { $0.append("withLock") } }
        }
        waiter.start()
        let task = Task {
            try await storage.withAsyncLock("tokens") { entered.withLock { $0.append("withAsyncLock") } }
        }
        // Both wait as long as the other holder keeps the file locked (no timing asserted: nothing may enter).
        for _ in 0..<20 { await Task.yield() }
        try await Task.sleep(nanoseconds: 100_000_000)
        XCTAssertEqual(entered.withLock { $0 }, [], "nobody entered while the other holder held the lock")
        XCTAssertEqual(flock(other, LOCK_UN), 0)
        close(other)
        try await task.value
        let both = await waitUntil { entered.withLock { $0.count } == 2 }
        XCTAssertTrue(both, "\(entered.withLock { $0 })")
    }

    /// Without an app group there is no file: the lock keeps out this process's other threads only.
    func testWithoutAnAppGroupTheLockIsThisProcesssOnly() throws {
        let storage = KeychainTokenStorage(service: service())
        let inside = Locked(false)
        let overlapped = Locked(false)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            try? storage.withLock("tokens") {
                overlapped.withLock { $0 = $0 || inside.withLock { $0 } }
                inside.withLock { $0 = true }
                Thread.sleep(forTimeInterval: 0.01)
                inside.withLock { $0 = false }
            }
        }
        XCTAssertFalse(overlapped.withLock { $0 }, "one thread at a time")
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.path), "no container was asked for")
    }

    /// A group the process is not entitled to has no container (iOS answers nil): the lock fails and says what to do.
    func testAGroupWithoutAContainerIsALockFailure() {
        AppGroupContainers.shared.entitled = ["group.cz.profirest.other"]
        let storage = KeychainTokenStorage(service: service(), appGroup: group)
        XCTAssertThrowsError(try storage.withLock("tokens") {}) { error in
            guard let error = error as? StorageError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.kind, .lockFailed)
            XCTAssertTrue(error.reason.contains("App Groups entitlement"), error.reason)
        }
    }

    func testTheLockIsNotReentrant() throws {
        let storage = KeychainTokenStorage(service: service(), appGroup: group)
        let again = KeychainTokenStorage(service: storage.service, appGroup: group)
        try storage.withLock("tokens") {
            XCTAssertThrowsError(try again.withLock("other") {}) { error in
                XCTAssertEqual((error as? StorageError)?.kind, .reentrantLock)
            }
        }
    }

    /// The in-memory keychain shared through a file, as the probe processes share it: what one call wrote is what the
    /// next reads from the file, not from this process's memory.
    func testTheSharedKeychainKeepsItsItemsInTheFile() throws {
        let file = root.appendingPathComponent("keychain.json").path
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        InMemoryKeychain.shared.shareItems(in: file)
        let storage = KeychainTokenStorage(service: service(), appGroup: group)
        try storage.set("tokens", "t1")
        let written = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(written.contains(storage.service), written)
        // Another process deletes the file's items meanwhile: this one sees that at its next call.
        try Data(#"{"dataProtection": [], "fileBased": []}"#.utf8).write(to: URL(fileURLWithPath: file))
        XCTAssertNil(try storage.get("tokens"))
        try storage.set("tokens", "t2")
        XCTAssertEqual(try storage.get("tokens"), "t2")
    }

    private func waitUntil(_ condition: @escaping @Sendable () -> Bool) async -> Bool {
        for _ in 0..<600 {
            if condition() { return true }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        return condition()
    }
}
