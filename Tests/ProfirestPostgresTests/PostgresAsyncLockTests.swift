import Foundation
import ProfirestAPI
import ProfirestTestSupport
import XCTest
@testable import ProfirestPostgres

/// `withAsyncLock`: the same lock as `withLock` across tasks, threads and processes, waited for without a thread per
/// waiter, and a statement never waits behind a lock's body that awaits the network. No timing bound is tight.
final class PostgresAsyncLockTests: PostgresTestCase {
    private func lock(_ key: String) -> String {
        let id = UInt64(bitPattern: PostgresTokenStorage.lockID(table: table, key: key))
        return "locktype = 'advisory' AND granted AND objsubid = 1 AND classid = \(id >> 32) AND objid = \(id & 0xffff_ffff)"
    }

    func testTasksAndThreadsOfTwoStoragesLoseNoIncrement() async throws {
        let storages = [try storage(maximumConnections: 3), try storage(maximumConnections: 3)]
        let failures = Failures()
        let threads = Task.detached {
            onThreads(2) { index in
                for _ in 0..<20 {
                    do {
                        try storages[index].withLock("counter") {
                            let n = try storages[index].get("counter").flatMap { Int($0) } ?? 0
                            try storages[index].set("counter", String(n + 1))
                        }
                    } catch { failures.record(error) }
                }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<16 {
                group.addTask {
                    let storage = storages[index % 2]
                    for _ in 0..<10 {
                        try await storage.withAsyncLock("counter") {
                            let n = try storage.get("counter").flatMap { Int($0) } ?? 0
                            await Task.yield()
                            try storage.set("counter", String(n + 1))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let finished = await threads.value
        XCTAssertTrue(finished)
        XCTAssertEqual(failures.all, [])
        XCTAssertEqual(try storages[0].get("counter"), "200")
    }

    func testWaitingForAnotherProcessesLockHoldsAtMostAFewThreads() async throws {
        let storage = try storage()
        let holder = try probe("hold-lock", ["--key", "profirest-api:x", "--seconds", "600"])
        XCTAssertEqual(holder.firstLine()["locked"] as? Bool, true)
        let before = Self.threads()
        // Thirty clients of this process (thirty storages, as thirty replicas' worth of connections would not share
        // one) want the lock another process holds.
        let waiting = try (0..<30).map { _ in try self.storage(maximumConnections: 2) }.map { other in
            Task { try await other.withAsyncLock("profirest-api:x") { try other.get("profirest-api:x") } }
        }
        try await Task.sleep(nanoseconds: 500_000_000)
        let during = Self.threads()
        // Meanwhile other keys and plain statements go on.
        let other = try await storage.withAsyncLock("other") { () -> String? in
            try storage.set("other", "\"ok\"")
            return try storage.get("other")
        }
        XCTAssertEqual(other, "\"ok\"")
        ProcessControl.kill(holder.process)
        for task in waiting { _ = try await task.value }
        holder.process.waitUntilExit()
        XCTAssertLessThanOrEqual(during - before, 4, "30 tasks waiting for a lock started threads")
    }

    /// With one connection per lane, lock bodies that await (a token request) and plain reads from other tasks all
    /// finish: a read never waits for a body, so no thread of the cooperative pool is blocked behind one.
    func testStatementsNeverWaitBehindALockBodyThatAwaits() async throws {
        let storage = try storage(maximumConnections: 1)
        try storage.set("shared", "\"v\"")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<6 {
                group.addTask {
                    try await storage.withAsyncLock("k\(index)") {
                        try await Task.sleep(nanoseconds: 50_000_000)  // the network call of a refresh
                        try storage.set("k\(index)", "\(index)")
                    }
                }
            }
            for _ in 0..<40 {
                group.addTask { XCTAssertEqual(try storage.get("shared"), "\"v\"") }
            }
            try await group.waitForAll()
        }
        XCTAssertEqual(try storage.get("k5"), "5")
    }

    func testNestingIsReportedAndASessionEndedUnderTheLockIsAnError() async throws {
        let storage = try storage()
        do {
            try await storage.withAsyncLock("k") { try storage.withLock("k") {} }
            XCTFail("nested")
        } catch let error as StorageError {
            XCTAssertEqual(error.kind, .reentrantLock)
        }
        do {
            try await storage.withAsyncLock("k") { _ = try await storage.withAsyncLock("k") { 1 } }
            XCTFail("nested")
        } catch let error as StorageError {
            XCTAssertEqual(error.kind, .reentrantLock)
        }
        let admin = try server.admin()
        let condition = lock("k")
        do {
            try await storage.withAsyncLock("k") {
                _ = try? admin.sql("SELECT pg_terminate_backend(pid, 60000) FROM pg_locks WHERE \(condition)")
                try storage.set("k", "1")
            }
            XCTFail("the lost session must be reported")
        } catch let error as StorageError {
            XCTAssertEqual(error.kind, .lockFailed)
        }
        let again = try await storage.withAsyncLock("k") { "again" }
        XCTAssertEqual(again, "again")
        XCTAssertEqual(try admin.sql("SELECT count(*)::text FROM pg_locks WHERE \(lock("k"))"), ["0"])
    }

    private static func threads() -> Int { ProcessControl.threadCount() ?? 0 }
}
