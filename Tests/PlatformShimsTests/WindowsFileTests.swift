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

/// Windows robustness of the token file (TokenFile+Windows.swift, LongPath+Windows.swift): paths longer than MAX_PATH,
/// a rename held up for a moment by another process (an antivirus scanner, the search indexer), and the flushes around
/// the rename. The shims hold paths to Win32's rules and record Sleep instead of sleeping (WinSDKPathShims.swift).
final class WindowsFileRobustnessTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("profirest-win-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// A folder whose token file's path is over 300 characters long.
    private func deepFolder() throws -> URL {
        let deep = folder.appendingPathComponent(String(repeating: "a", count: 120))
            .appendingPathComponent(String(repeating: "b", count: 120))
        try FileManager.default.createDirectory(at: deep, withIntermediateDirectories: true)
        return deep
    }

    /// Opens `path` as another process would, for reading and sharing it for reading only: no FILE_SHARE_DELETE, so the
    /// file cannot be renamed over or deleted while the handle is open.
    private func openAsScanner(_ path: String) -> HANDLE {
        let handle = path.withCString(encodedAs: UTF16.self) {
            CreateFileW($0, GENERIC_READ, DWORD(FILE_SHARE_READ), nil, DWORD(OPEN_EXISTING), DWORD(FILE_ATTRIBUTE_NORMAL), nil)
        }
        XCTAssertNotEqual(handle, INVALID_HANDLE_VALUE, "the scanner opens \(path)")
        return handle!
    }

    private func temporaryFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".tmp-") }
    }

    func testLongPaths() throws {
        let deep = try deepFolder()
        let path = deep.appendingPathComponent("tokens.json").path
        XCTAssertGreaterThan(path.utf16.count, Int(MAX_PATH))
        // The shims hold such a path to MAX_PATH as Windows does: without the \\?\ prefix it is not found.
        let plain = path.withCString(encodedAs: UTF16.self) {
            CreateFileW($0, DWORD(GENERIC_WRITE), 0, nil, DWORD(CREATE_NEW), DWORD(FILE_ATTRIBUTE_NORMAL), nil)
        }
        XCTAssertEqual(plain, INVALID_HANDLE_VALUE)
        XCTAssertEqual(GetLastError(), DWORD(ERROR_PATH_NOT_FOUND), "a path over MAX_PATH without \\\\?\\")

        // The library's own calls prefix it: the token file, its temporary file and the lock file all work.
        try TokenFile.replace(path: path, with: Data("{\"refresh\":\"r1\"}".utf8))
        XCTAssertEqual(try TokenFile.load(path: path), Data("{\"refresh\":\"r1\"}".utf8))
        try TokenFile.replace(path: path, with: Data("{}".utf8))
        XCTAssertEqual(try TokenFile.load(path: path), Data("{}".utf8))
        guard case .descriptor(let descriptor)? = WindowsFiles.shared.security(atPath: path) else {
            return XCTFail("the long-path token file was not created with a descriptor")
        }
        XCTAssertTrue(descriptor.daclIsProtected)
        XCTAssertEqual(descriptor.dacl?.map(\.sid), [WindowsShimUser.sid])
        let lock = try FileLock.acquire(path: path + ".lock")
        lock.release()
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: deep.path).sorted(), ["tokens.json", "tokens.json.lock"])

        // And a long-path file the library did not write is tightened when read (GetNamedSecurityInfoW and
        // SetNamedSecurityInfoW get the prefixed path too).
        let foreign = deep.appendingPathComponent("restored.json").path
        XCTAssertTrue(FileManager.default.createFile(atPath: foreign, contents: Data("{}".utf8)))
        XCTAssertNil(WindowsFiles.shared.security(atPath: foreign))
        XCTAssertEqual(try TokenFile.load(path: foreign), Data("{}".utf8))
        guard case .descriptor(let tightened)? = WindowsFiles.shared.security(atPath: foreign) else {
            return XCTFail("the long-path file read was not given the owner-only DACL")
        }
        XCTAssertEqual(tightened.dacl?.map(\.sid), [WindowsShimUser.sid])
    }

    func testExtendedLengthForms() {
        let cwd = FileManager.default.currentDirectoryPath.replacingOccurrences(of: "/", with: #"\"#)
        XCTAssertEqual(LongPath.extended("/tmp/x/../y/./tokens.json"), #"\\?\C:\tmp\y\tokens.json"#)
        XCTAssertEqual(LongPath.extended(#"C:\tmp\tokens.json"#), #"\\?\C:\tmp\tokens.json"#)
        XCTAssertEqual(LongPath.extended("tokens.json"), #"\\?\C:"# + cwd + #"\tokens.json"#, "relative: the current folder")
        XCTAssertEqual(LongPath.extended(#"\\?\C:\x"#), #"\\?\C:\x"#, "already extended: kept")
    }

    /// A scanner holding the old token file open without FILE_SHARE_DELETE makes MoveFileExW fail with
    /// ERROR_ACCESS_DENIED until it lets go; the replacement waits and then succeeds.
    func testRenameWaitsForAScannerToLetGo() throws {
        let path = folder.appendingPathComponent("tokens.json").path
        try TokenFile.replace(path: path, with: Data("old".utf8))
        let scanner = openAsScanner(path)
        let waits = try WindowsShimThread.sleeping(onSleep: { count in if count == 2 { CloseHandle(scanner) } }) {
            try TokenFile.replace(path: path, with: Data("new".utf8))
        }
        XCTAssertEqual(waits, [10, 20], "tried three times: refused twice, then the scanner had let go")
        XCTAssertEqual(try TokenFile.load(path: path), Data("new".utf8))
        XCTAssertEqual(try temporaryFiles(), [])
    }

    func testRenameRetriesSharingViolations() throws {
        let path = folder.appendingPathComponent("tokens.json").path
        let waits = try WindowsShimThread.sleeping {
            try WindowsShimThread.failing("MoveFileExW", 3, with: DWORD(ERROR_SHARING_VIOLATION)) {
                try TokenFile.replace(path: path, with: Data("new".utf8))
            }
        }
        XCTAssertEqual(waits, [10, 20, 40])
        XCTAssertEqual(try TokenFile.load(path: path), Data("new".utf8))
        XCTAssertEqual(try temporaryFiles(), [])
    }

    /// A file that stays held is reported after about two seconds, the old content in place and no temporary file
    /// left behind; an error that is not about another process holding a file is reported at once.
    func testRenameGivesUpAfterTheBudgetAndOtherErrorsAtOnce() throws {
        let path = folder.appendingPathComponent("tokens.json").path
        try TokenFile.replace(path: path, with: Data("old".utf8))
        let scanner = openAsScanner(path)
        defer { CloseHandle(scanner) }
        var thrown: (any Error)?
        let waits = WindowsShimThread.sleeping {
            do { try TokenFile.replace(path: path, with: Data("new".utf8)) } catch { thrown = error }
        }
        let error = try XCTUnwrap(thrown as? StorageError)
        XCTAssertEqual(error.kind, .unwritable)
        XCTAssertTrue(error.reason.contains("MoveFileExW failed, Windows error 5"), error.reason)
        let total = waits.reduce(0, +)
        XCTAssertGreaterThanOrEqual(total, TokenFile.moveRetryBudget)
        XCTAssertLessThan(total, TokenFile.moveRetryBudget + 250)
        XCTAssertEqual(waits.prefix(6), [10, 20, 40, 80, 160, 250])
        CloseHandle(scanner)
        XCTAssertEqual(try TokenFile.load(path: path), Data("old".utf8))
        XCTAssertEqual(try temporaryFiles(), [])

        let diskFull: DWORD = 112  // ERROR_DISK_FULL
        let none = try WindowsShimThread.sleeping {
            XCTAssertThrowsError(
                try WindowsShimThread.failing("MoveFileExW", 1, with: diskFull) {
                    try TokenFile.replace(path: path, with: Data("new".utf8))
                })
        }
        XCTAssertEqual(none, [], "not retried")
        XCTAssertEqual(try temporaryFiles(), [])
    }

    /// The content is flushed before the rename, and the renamed file once more after it (best effort: a failure
    /// there is not an error, the content is in place).
    func testReplacementIsFlushedBeforeAndAfterTheRename() throws {
        let path = folder.appendingPathComponent("tokens.json").path
        let handles = WindowsFiles.shared.openHandles
        let (calls, error) = WindowsShimThread.tracing { try TokenFile.replace(path: path, with: Data("{}".utf8)) }
        XCTAssertNil(error)
        let files = calls.filter { ["CreateFileW", "WriteFile", "FlushFileBuffers", "CloseHandle", "MoveFileExW"].contains($0) }
        XCTAssertEqual(
            Array(files.dropLast()),  // the last CloseHandle is the process token's
            ["CreateFileW", "WriteFile", "FlushFileBuffers", "CloseHandle", "MoveFileExW", "CreateFileW",
             "FlushFileBuffers", "CloseHandle"])
        XCTAssertEqual(calls.filter { $0 == "GetFullPathNameW" }.count, 8, "two calls (size, path) for each of four paths")
        // The flush after the rename failing — opening the file again, or flushing it — is no error.
        try WindowsShimThread.failing("CreateFileW", 1, with: DWORD(ERROR_SHARING_VIOLATION), skipping: 1) {
            try TokenFile.replace(path: path, with: Data("{\"a\":1}".utf8))
        }
        XCTAssertEqual(try TokenFile.load(path: path), Data("{\"a\":1}".utf8))
        try WindowsShimThread.failing("FlushFileBuffers", 1, with: DWORD(ERROR_ACCESS_DENIED), skipping: 1) {
            try TokenFile.replace(path: path, with: Data("{\"a\":2}".utf8))
        }
        XCTAssertEqual(try TokenFile.load(path: path), Data("{\"a\":2}".utf8))
        XCTAssertEqual(WindowsFiles.shared.openHandles, handles, "every handle closed")
    }
}

private final class OrderLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    var entries: [String] { lock.withLock { list } }
    func append(_ entry: String) { lock.withLock { list.append(entry) } }
}
