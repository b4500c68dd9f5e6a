import Foundation
import WindowsShims
import XCTest
@testable import PlatformShims

/// FileLock+Windows.swift and TokenFile+Windows.swift — the library's files, compiled unchanged in PlatformShims
/// against the WinSDK shims — run against a lock table that behaves as LockFileEx is documented. What this cannot
/// show: Windows' own file system and locking. The ACLs the files are created with: WindowsOwnerOnlyTests.
final class WindowsFileTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("profirest-win-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// JournalFile+Windows.swift, the outbox journal's appends on Windows (Foundation's FileHandle only): a file made
    /// by TokenFile.replace is read at an offset, appended to at its end, cut back, flushed; a missing file is nil.
    func testJournalFileReadsAppendsCutsAndFlushes() throws {
        let path = folder.appendingPathComponent("outbox.json").path
        XCTAssertNil(try JournalFile.open(path: path))
        try TokenFile.replace(path: path, with: Data("header\n".utf8))
        let file = try XCTUnwrap(try JournalFile.open(path: path))
        XCTAssertEqual(try file.size(), 7)
        try file.write(Data("one\ntwo\n".utf8), at: 7)
        try file.sync()
        XCTAssertEqual(try file.read(from: 7, count: 100), Data("one\ntwo\n".utf8))
        try file.truncate(to: 11)
        XCTAssertEqual(try file.size(), 11)
        XCTAssertEqual(FileManager.default.contents(atPath: path), Data("header\none\n".utf8))
    }

    func testLockIsExclusiveAcrossThreadsAndReleased() throws {
        let path = folder.appendingPathComponent("tokens.json.lock").path
        let handlesBefore = WindowsFiles.shared.openHandles
        let first = try FileLock.acquire(path: path)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path), "OPEN_ALWAYS creates the lock file")
        let acquired = expectation(description: "second holder")
        let order = OrderLog()
        Thread.detachNewThread {
            do {
                let second = try FileLock.acquire(path: path)
                order.append("second")
                second.release()
            } catch {
                order.append("error \(error)")
            }
            acquired.fulfill()
        }
        Thread.sleep(forTimeInterval: 0.2)
        order.append("first releases")
        first.release()
        wait(for: [acquired], timeout: 30)
        XCTAssertEqual(order.entries, ["first releases", "second"], "the second waits for the first")
        XCTAssertEqual(WindowsFiles.shared.openHandles, handlesBefore, "every handle is closed")
        // And it can be taken again.
        try FileLock.acquire(path: path).release()
    }

    func testLockInAMissingFolderIsAClearLockError() {
        let path = folder.appendingPathComponent("missing/tokens.json.lock").path
        XCTAssertThrowsError(try FileLock.acquire(path: path)) { error in
            guard let error = error as? StorageError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.kind, .lockFailed)
            XCTAssertEqual(error.path, path)
            XCTAssertTrue(error.reason.contains("Windows error 3"), error.reason)
        }
    }

    func testTokenFileLoadReplaceAndErrors() throws {
        let path = folder.appendingPathComponent("tokens.json").path
        XCTAssertNil(try TokenFile.load(path: path), "a missing file is no data, not an error")
        try TokenFile.replace(path: path, with: Data("{\"a\":1}".utf8))
        XCTAssertEqual(try TokenFile.load(path: path), Data("{\"a\":1}".utf8))
        try TokenFile.replace(path: path, with: Data("{}".utf8))
        XCTAssertEqual(try TokenFile.load(path: path), Data("{}".utf8))
        XCTAssertThrowsError(try TokenFile.replace(path: folder.appendingPathComponent("no/t.json").path, with: Data())) {
            XCTAssertEqual(($0 as? StorageError)?.kind, .unwritable)
        }
        XCTAssertThrowsError(try TokenFile.load(path: folder.path)) {  // a folder is not a readable file
            XCTAssertEqual(($0 as? StorageError)?.kind, .unreadable)
        }
    }
}

private final class OrderLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    var entries: [String] { lock.withLock { list } }
    func append(_ entry: String) { lock.withLock { list.append(entry) } }
}
