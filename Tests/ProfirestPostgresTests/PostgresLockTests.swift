import Foundation
import ProfirestAPI
import ProfirestTestSupport
import XCTest
@testable import ProfirestPostgres

/// PostgresTokenStorage's lock: across threads and processes, a holder killed, a session ended under the lock.
/// No timing bound is tight: both cores may be busy with another build; waits are generous and only lower bounds
/// ("not acquired while held") are short.
final class PostgresLockTests: PostgresTestCase {
    private static func increment(_ storage: PostgresTokenStorage, _ key: String) throws {
        try storage.withLock(key) {
            let current = try storage.get(key).flatMap { Int($0) } ?? 0
            try storage.set(key, String(current + 1))
        }
    }

    /// The condition on pg_locks that selects the granted advisory lock of `key` in this test's table (a bigint
    /// advisory lock shows its high half as classid, its low half as objid).
    private func lock(_ key: String) -> String {
        let id = UInt64(bitPattern: PostgresTokenStorage.lockID(table: table, key: key))
        return "locktype = 'advisory' AND granted AND objsubid = 1 AND classid = \(id >> 32) AND objid = \(id & 0xffff_ffff)"
    }

    func testIncrementsFromManyThreadsUnderTheLockLoseNone() throws {
        // Two storages (as two replicas would have), 8 threads, 25 increments each.
        let storages = [try storage(maximumConnections: 3), try storage(maximumConnections: 3)]
        let failures = Failures()
        XCTAssertTrue(onThreads(8) { index in
            for _ in 0..<25 {
                do { try Self.increment(storages[index % 2], "counter") } catch { failures.record(error) }
            }
        })
        XCTAssertEqual(failures.all, [])
        XCTAssertEqual(try storages[0].get("counter"), "200")
    }

    func testIncrementsFromSeveralProcessesAndThreadsLoseNone() throws {
        let storage = try storage()
        let probes = try (0..<3).map { _ in try probe("increment", ["--key", "counter", "--times", "40"]) }
        let failures = Failures()
        XCTAssertTrue(onThreads(2) { _ in
            for _ in 0..<20 {
                do { try Self.increment(storage, "counter") } catch { failures.record(error) }
            }
        })
        for probe in probes {
            let (status, summary) = probe.finished()
            XCTAssertEqual(status, 0, "\(summary)")
            XCTAssertEqual(summary["done"] as? Int, 40, "\(summary)")
        }
        XCTAssertEqual(failures.all, [])
        XCTAssertEqual(try storage.get("counter"), "160")
    }

    func testTheLockOfAProcessKilledWhileHoldingItIsReleased() throws {
        let storage = try storage()
        let holder = try probe("hold-lock", ["--key", "profirest-api:x", "--seconds", "600"])
        XCTAssertEqual(holder.firstLine()["locked"] as? Bool, true)
        let acquired = DispatchSemaphore(value: 0)
        let failures = Failures()
        Thread {
            do { try storage.withLock("profirest-api:x") { _ = acquired.signal() } } catch { failures.record(error); acquired.signal() }
        }.start()
        XCTAssertEqual(acquired.wait(timeout: .now() + 1), .timedOut, "the lock is not taken while another process holds it")
        ProcessControl.kill(holder.process)
        XCTAssertEqual(acquired.wait(timeout: .now() + 120), .success, "the server releases the lock of a killed process")
        XCTAssertEqual(failures.all, [])
        holder.process.waitUntilExit()
        XCTAssertTrue(ProcessControl.wasKilled(holder.process))
        // And another process takes it too.
        let next = try probe("hold-lock", ["--key", "profirest-api:x", "--seconds", "0"])
        XCTAssertEqual(next.finished().status, 0)
    }

    func testOtherKeysAreNotBlockedByAHeldLock() throws {
        let storage = try storage()
        let holder = try probe("hold-lock", ["--key", "one", "--seconds", "600"])
        XCTAssertEqual(holder.firstLine()["locked"] as? Bool, true)
        XCTAssertEqual(try storage.withLock("two") { try storage.set("two", "2"); return try storage.get("two") ?? "" }, "2")
        XCTAssertEqual(try storage.get("one"), nil, "reads and writes do not wait for locks")
    }

    func testReadsDoNotWaitForLocksHeldAcrossARefresh() throws {
        // Four connections: three for locks at most, so a read gets one while every lock waits (as a refresh waits on
        // the network, which in a client runs on the very cooperative threads a read from async code would block).
        let storage = try storage(maximumConnections: 4)
        try storage.set("read-me", "1")
        let release = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        let failures = Failures()
        for index in 0..<4 {
            Thread {
                do {
                    try storage.withLock("held-\(index)") {
                        held.signal()
                        release.wait()
                    }
                } catch {
                    failures.record(error)
                }
                held.signal()  // the fourth lock, once one of the first three is released
            }.start()
        }
        for _ in 0..<3 { XCTAssertEqual(held.wait(timeout: .now() + 120), .success, "three locks are held") }
        XCTAssertEqual(held.wait(timeout: .now() + 1), .timedOut, "the fourth lock waits: three quarters are for locks")
        let read = DispatchSemaphore(value: 0)
        Thread {
            do {
                let value = try storage.get("read-me")
                if value != "1" { failures.record(StorageError(kind: .corrupt, path: "read-me", reason: "read \(value ?? "nil")")) }
            } catch {
                failures.record(error)
            }
            read.signal()
        }.start()
        XCTAssertEqual(read.wait(timeout: .now() + 120), .success, "a read is not kept waiting by the locks")
        for _ in 0..<4 { release.signal() }
        XCTAssertTrue((0..<5).allSatisfy { _ in held.wait(timeout: .now() + 120) == .success }, "every lock got its turn")
        XCTAssertEqual(failures.all, [])
    }

    func testASessionEndedUnderTheLockIsAClearErrorAndTheNextCallWorks() throws {
        let storage = try storage()
        try storage.set("profirest-api:x", "1")
        let admin = try server.admin()
        let error = storageError {
            try storage.withLock("profirest-api:x") {
                XCTAssertEqual(try storage.get("profirest-api:x"), "1")
                let ended = try admin.sql(
                    "SELECT pg_terminate_backend(pid, 60000)::text FROM pg_locks WHERE \(lock("profirest-api:x"))")
                XCTAssertEqual(ended, ["true"], "one session held the lock")
                // Writing now would write without the lock: it throws instead, and nothing is written.
                let write = storageError { try storage.set("profirest-api:x", "2") }
                XCTAssertEqual(write?.kind, .lockFailed)
                XCTAssertTrue(write?.reason.contains("nothing was written") == true, "\(String(describing: write))")
            }
        }
        XCTAssertEqual(error?.kind, .lockFailed)
        XCTAssertTrue(error?.reason.contains("lost before the body ended") == true, "\(String(describing: error))")
        XCTAssertEqual(try storage.get("profirest-api:x"), "1")
        XCTAssertEqual(try storage.withLock("profirest-api:x") { try storage.set("profirest-api:x", "3"); return 3 }, 3)
        XCTAssertEqual(try storage.get("profirest-api:x"), "3")
    }

    func testASessionEndedUnderTheLockIsAnErrorEvenWhenTheBodyDidNotNotice() throws {
        let storage = try storage()
        let admin = try server.admin()
        let error = storageError {
            try storage.withLock("k") {
                _ = try? admin.sql("SELECT pg_terminate_backend(pid, 60000) FROM pg_locks WHERE \(lock("k"))")
            }
        }
        XCTAssertEqual(error?.kind, .lockFailed)
        XCTAssertEqual(try storage.withLock("k") { "again" }, "again")
        XCTAssertEqual(try admin.sql("SELECT count(*)::text FROM pg_locks WHERE \(lock("k"))"), ["0"],
                       "no lock is left behind")
    }

    func testWithLockIsNotReentrantButOtherKeysNest() throws {
        let storage = try storage(maximumConnections: 1)
        let error = storageError { try storage.withLock("k") { try storage.withLock("k") {} } }
        XCTAssertEqual(error?.kind, .reentrantLock)
        // Another storage of the same table is the same lock.
        let other = try self.storage()
        XCTAssertEqual(storageError { try storage.withLock("k") { try other.withLock("k") {} } }?.kind, .reentrantLock)
        // Another key nests, even with a single connection allowed (the holder gets one beyond the limit).
        let nested = try storage.withLock("a") {
            try storage.withLock("b") {
                try storage.set("a", "1")
                try storage.set("b", "2")
                try storage.set("c", "3")
                return try [storage.get("a"), storage.get("b"), storage.get("c")]
            }
        }
        XCTAssertEqual(nested, ["1", "2", "3"])
        for key in ["k", "a", "b"] {
            XCTAssertEqual(try server.admin().sql("SELECT count(*)::text FROM pg_locks WHERE \(lock(key))"), ["0"])
        }
    }

    func testTheBodysErrorAndResultPassThroughAndTheLockIsReleased() throws {
        struct Oops: Error {}
        let storage = try storage()
        XCTAssertThrowsError(try storage.withLock("k") { throw Oops() }) { XCTAssertTrue($0 is Oops) }
        XCTAssertEqual(try storage.withLock("k") { 7 }, 7)
        let holder = try probe("hold-lock", ["--key", "k", "--seconds", "0"])
        XCTAssertEqual(holder.finished().status, 0, "another process gets the lock")
    }
}
