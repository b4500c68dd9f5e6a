import Foundation
import ProfirestTestSupport
import XCTest
@testable import ProfirestAPI

/// The async form of the storage lock (`LockingTokenStorage.withAsyncLock`) and the state store over it: tasks
/// and threads exclude each other, nesting is reported, and waiting for a lock — behind another thread, task or
/// process — holds no thread per waiter: a process with a thousand connections must not start a thread per refresh or
/// per batch of events. No timing bound is tight: both cores may be busy with other builds.
final class AsyncLockTests: XCTestCase {
    private let key = "profirest-api:partner:restaurant-1"

    func testAsyncAndSyncLocksOfAMemoryStorageExcludeEachOther() async throws {
        let storage = MemoryTokenStorage()
        try storage.set("counter", "0")
        let threads = Task.detached { incrementUnderLock(threads: 4, rounds: 100) { _ in storage } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    for _ in 0..<10 {
                        try await storage.withAsyncLock("counter") {
                            let n = Int(try storage.get("counter") ?? "0")!
                            await Task.yield()  // another task would get in here without the lock
                            try storage.set("counter", String(n + 1))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let run = await threads.value
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.errors, [])
        XCTAssertEqual(try storage.get("counter"), "800")
    }

    func testNestingInsideAnAsyncBodyIsReportedAndTheStorageStillWorksThere() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storages: [any LockingTokenStorage] = [MemoryTokenStorage(), FileTokenStorage(path: directory.file("t.json"))]
        for storage in storages {
            let seen = try await storage.withAsyncLock("k") { () -> String? in
                try storage.set("k", "\"inside\"")  // set inside the body does not wait for the body's own lock
                for nested in [
                    { try await storage.withAsyncLock("k") { 1 } },
                    { try storage.withLock("k") { 2 } },
                ] as [@Sendable () async throws -> Int] {
                    do {
                        _ = try await nested()
                        XCTFail("a nested lock of \(type(of: storage)) must throw")
                    } catch let error as StorageError {
                        XCTAssertEqual(error.kind, .reentrantLock, "\(type(of: storage))")
                    }
                }
                return try storage.get("k")
            }
            XCTAssertEqual(seen, "\"inside\"")
            let again = try await storage.withAsyncLock("k") { "free" }
            XCTAssertEqual(again, "free", "released after the body")
            XCTAssertEqual(try storage.withLock("k") { "free" }, "free")
        }
    }

    /// A task that inherited the body's task-local lock but outlives the body holds nothing.
    func testATaskStartedInsideTheBodyDoesNotKeepTheLockAfterIt() async throws {
        let storage = MemoryTokenStorage()
        let late = try await storage.withAsyncLock("k") {
            Task { () -> String in
                try await Task.sleep(nanoseconds: 100_000_000)
                return try await storage.withAsyncLock("k") { "taken again" }
            }
        }
        let outcome = try await late.value
        XCTAssertEqual(outcome, "taken again")
    }

    #if os(Linux)
    func testTasksWaitingBehindAHeldMemoryLockHoldNoThreads() async throws {
        let storage = MemoryTokenStorage()
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        let key = self.key
        Thread {
            try? storage.withLock(key) {
                holding.signal()
                release.wait()
            }
        }.start()
        holding.wait()
        let before = threadCount()
        let store = StateStore(storage: storage, key: key)
        let saves = (0..<300).map { index in
            Task { try await store.saveCursor("c\(index)", restaurantID: "1", types: []) }
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        let during = threadCount()
        release.signal()
        for save in saves { try await save.value }
        XCTAssertLessThanOrEqual(during - before, 2, "300 cursor saves waiting for the lock started threads")
        XCTAssertNotNil(store.cursor(restaurantID: "1", types: []))
    }

    func testTasksWaitingForAFileLockAnotherProcessHoldsUseAtMostThePoolsThreads() async throws {
        // Debian's util-linux (essential, so on every machine this runs on) holds the lock as another process would.
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: "/usr/bin/flock"), "/usr/bin/flock is missing")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("tokens.json")
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        holder.arguments = ["-c", #"exec 9>>"$1"; flock -x 9; echo ready; exec sleep 600"#, "sh", path + ".lock"]
        let output = Pipe()
        holder.standardOutput = output
        try holder.run()
        defer { if holder.isRunning { holder.terminate() } }
        XCTAssertEqual(String(decoding: output.fileHandleForReading.availableData, as: UTF8.self), "ready\n")
        let before = threadCount()
        // 100 connections of one file (a key each), all saving a cursor while another process refreshes.
        let saves = (0..<100).map { index in
            Task {
                let store = StateStore(storage: FileTokenStorage(path: path), key: "profirest-api:p:\(index)")
                try await store.saveCursor("c\(index)", restaurantID: nil, types: [])
            }
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        let during = threadCount()
        holder.terminate()
        for save in saves { try await save.value }
        XCTAssertLessThanOrEqual(during - before, 4, "waiting for another process's file lock started threads")
        for index in [0, 50, 99] {
            XCTAssertEqual(StateStore(storage: FileTokenStorage(path: path), key: "profirest-api:p:\(index)")
                .cursor(restaurantID: nil, types: []), "c\(index)")
        }
    }

    func testAFileAsyncLockWaitsForAnotherProcess() async throws {
        // Debian's util-linux (essential, so on every machine this runs on) holds the lock as another process would.
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: "/usr/bin/flock"), "/usr/bin/flock is missing")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("tokens.json")
        let marker = directory.file("released")
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        holder.arguments = ["-c", #"exec 9>>"$1"; flock -x 9; echo ready; sleep 0.3; echo done > "$2""#, "sh",
                            path + ".lock", marker]
        let output = Pipe()
        holder.standardOutput = output
        try holder.run()
        XCTAssertEqual(String(decoding: output.fileHandleForReading.availableData, as: UTF8.self), "ready\n")
        let entered = try await FileTokenStorage(path: path).withAsyncLock("k") {
            FileManager.default.fileExists(atPath: marker)
        }
        XCTAssertTrue(entered, "withAsyncLock must not enter while the other process holds the lock")
        holder.waitUntilExit()
    }
    #endif

    /// A storage with only the synchronous lock, that knows its holder by thread (as a custom storage may): the state
    /// store runs its lock on a pool thread, and the body's reads and writes happen on that thread.
    func testAStorageWithOnlyASynchronousLockIsLockedOnAFewSharedThreads() async throws {
        let storage = ThreadBoundStorage()
        let stores = (0..<4).map { _ in StateStore(storage: storage, key: key) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<60 {
                group.addTask {
                    try await stores[index % 4].updateAsync { state in
                        let n = Int(state.eventsCursor["events_cursor"] ?? "0")!
                        state.eventsCursor["events_cursor"] = String(n + 1)
                    }
                }
            }
            try await group.waitForAll()
        }
        // A store of its own reads the storage (each of the four remembers only its own last write).
        XCTAssertEqual(StateStore(storage: storage, key: key).cursor(restaurantID: nil, types: []), "60")
        XCTAssertEqual(storage.violations, [])
        XCTAssertLessThanOrEqual(storage.threadsSeen, 4, "more lock threads than the shared pool has")
    }
}

#if os(Linux)
/// The threads of this process now.
func threadCount() -> Int { ProcessControl.threadCount() ?? 0 }
#endif

/// A `LockingTokenStorage` (not async) whose lock belongs to a thread, and which records any `get`/`set`/`remove`
/// made while another thread holds the lock — what a storage keyed by thread would get wrong.
final class ThreadBoundStorage: LockingTokenStorage, @unchecked Sendable {
    // @unchecked: everything is guarded by `condition`.
    private let condition = NSCondition()
    private var values: [String: String] = [:]
    private var holder: Thread?
    private var seen: Set<ObjectIdentifier> = []
    private var recorded: [String] = []

    var violations: [String] { condition.lock(); defer { condition.unlock() }; return recorded }
    var threadsSeen: Int { condition.lock(); defer { condition.unlock() }; return seen.count }

    private func access<R>(_ what: String, _ body: () -> R) -> R {
        condition.lock()
        defer { condition.unlock() }
        if let holder, holder !== Thread.current { recorded.append("\(what) from a thread not holding the lock") }
        return body()
    }

    func get(_ key: String) throws -> String? { access("get") { values[key] } }
    func set(_ key: String, _ value: String) throws { access("set") { values[key] = value } }
    func remove(_ key: String) throws { access("remove") { values[key] = nil } }

    func withLock<T>(_ key: String, _ body: () throws -> T) throws -> T {
        condition.lock()
        while holder != nil { condition.wait() }
        holder = Thread.current
        seen.insert(ObjectIdentifier(Thread.current))
        condition.unlock()
        defer {
            condition.lock()
            holder = nil
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }
}
