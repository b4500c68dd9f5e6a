import XCTest
@testable import ProfirestAPI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
// The permission tests (modes, umask, inodes) are POSIX's; on Windows the owner-only ACL is tested against the WinSDK
// shims (PlatformShimsTests/WindowsOwnerOnlyTests), and the rest of this file runs there as it is.

final class FileTokenStorageTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var path: String { directory.file("tokens.json") }

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory.remove()
    }

    #if !os(Windows)
    private func mode(_ path: String) -> UInt32 {
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0, "stat \(path)")
        return UInt32(info.st_mode) & 0o777
    }

    private func inode(_ path: String) -> UInt64 {
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0, "stat \(path)")
        return UInt64(info.st_ino)
    }
    #endif

    private func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    func testMissingFileHoldsNoValues() throws {
        let storage = FileTokenStorage(path: path)
        XCTAssertNil(try storage.get("refresh"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "reading creates nothing")
    }

    func testGetSetRemoveWithSeveralKeysInOneFile() throws {
        let storage = FileTokenStorage(path: path)
        try storage.set("refresh", "r1")
        try storage.set("access", "a/1 \"quoted\" é")
        try storage.set("refresh", "r2")
        XCTAssertEqual(try storage.get("refresh"), "r2")
        XCTAssertEqual(try storage.get("access"), "a/1 \"quoted\" é")

        let other = FileTokenStorage(path: path)
        XCTAssertEqual(try other.get("refresh"), "r2", "another instance (or process) reads the same file")
        try other.remove("refresh")
        try other.remove("never-set")
        XCTAssertNil(try storage.get("refresh"))

        let onDisk = try JSONDecoder().decode([String: String].self, from: XCTUnwrap(contents(path)))
        XCTAssertEqual(onDisk, ["access": "a/1 \"quoted\" é"])
    }

    func testRelativePathIsMadeAbsolute() {
        let storage = FileTokenStorage(path: "some/../tokens.json")
        XCTAssertEqual(storage.path, FileManager.default.currentDirectoryPath + "/tokens.json")
    }

    #if !os(Windows)
    func testFileAndLockFileAreOwnerOnlyWhateverTheUmask() throws {
        let previous = umask(0)
        defer { umask(previous) }
        let storage = FileTokenStorage(path: path)
        try storage.set("refresh", "r1")
        XCTAssertEqual(mode(path), 0o600)
        XCTAssertEqual(mode(path + ".lock"), 0o600)
    }

    func testWiderExistingFilesAreTightened() throws {
        _ = FileManager.default.createFile(atPath: path, contents: Data(#"{"refresh":"r1"}"#.utf8))
        _ = FileManager.default.createFile(atPath: path + ".lock", contents: nil)
        XCTAssertEqual(chmod(path, 0o644), 0)
        XCTAssertEqual(chmod(path + ".lock", 0o666), 0)
        let storage = FileTokenStorage(path: path)
        XCTAssertEqual(try storage.get("refresh"), "r1")
        XCTAssertEqual(mode(path), 0o600, "reading tightens")
        XCTAssertEqual(chmod(path, 0o644), 0)
        try storage.set("access", "a1")
        XCTAssertEqual(mode(path), 0o600, "writing replaces with an owner-only file")
        XCTAssertEqual(mode(path + ".lock"), 0o600)
    }

    func testWritesReplaceTheFileAtomicallyAndLeaveNoTemporaryFiles() throws {
        let storage = FileTokenStorage(path: path)
        try storage.set("refresh", "r1")
        // A reader that opened the old file keeps seeing all of it: the new content arrives as a new inode.
        let reader = try XCTUnwrap(FileHandle(forReadingAtPath: path))
        defer { try? reader.close() }
        let before = inode(path)
        try storage.set("refresh", "r2")
        XCTAssertNotEqual(inode(path), before, "a new file was renamed over the old one, not rewritten in place")
        XCTAssertEqual(String(decoding: reader.readDataToEndOfFile(), as: UTF8.self), #"{"refresh":"r1"}"# + "\n")
        for n in 0..<20 { try storage.set("refresh", "r\(n)") }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        XCTAssertEqual(names, ["tokens.json", "tokens.json.lock"])
    }

    func testMissingDirectoryIsCreatedOwnerOnly() throws {
        let nested = directory.file("a/b/tokens.json")
        try FileTokenStorage(path: nested).set("refresh", "r1")
        XCTAssertEqual(try FileTokenStorage(path: nested).get("refresh"), "r1")
        XCTAssertEqual(mode(directory.file("a/b")), 0o700)
    }
    #endif

    func testCorruptFileThrowsWithoutTouchingItOrLeakingIt() throws {
        let bad = [
            #"{"refresh": "secret-token-123""#,  // truncated
            #"{"refresh": 42, "note": "secret-token-123"}"#,  // not all strings
            #"["secret-token-123"]"#,
            "",
            "\u{FF}\u{FE}secret-token-123",
        ]
        for text in bad {
            _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
            let original = contents(path)
            let storage = FileTokenStorage(path: path)
            for attempt in [{ _ = try storage.get("refresh") }, { try storage.set("refresh", "new") }] {
                XCTAssertThrowsError(try attempt(), text) { error in
                    guard let error = error as? StorageError else { return XCTFail("\(error)") }
                    XCTAssertEqual(error.kind, .corrupt)
                    XCTAssertEqual(error.path, path)
                    XCTAssertTrue(error.description.contains("delete it"), error.description)
                    XCTAssertFalse(error.description.contains("secret-token"), "the message must not quote the file")
                }
            }
            XCTAssertEqual(contents(path), original, "a corrupt file is left for the user to inspect")
        }
    }

    func testUnreadableFileThrows() throws {
        // Tests run as root in CI, where permission bits do not stop reads; a directory in the way does.
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        XCTAssertThrowsError(try FileTokenStorage(path: path).get("refresh")) { error in
            XCTAssertEqual((error as? StorageError)?.kind, .unreadable)
        }
    }

    func testWithLockExcludesThreadsOfThisProcess() throws {
        // Two instances on one file: exclusion must not depend on sharing an object.
        let storages = [FileTokenStorage(path: path), FileTokenStorage(path: path)]
        try storages[0].set("counter", "0")
        let run = incrementUnderLock(threads: 8, rounds: 25) { storages[$0 % 2] }
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.errors, [])
        XCTAssertEqual(try storages[1].get("counter"), "200")
    }

    func testUnlockedSetsFromManyThreadsLoseNoKeys() throws {
        let storage = FileTokenStorage(path: path)
        let errors = ErrorBox()
        let finished = runOnThreads(8) { index in
            for n in 0..<10 {
                do { try storage.set("k\(index)-\(n)", "v") } catch { errors.record(error) }
            }
        }
        XCTAssertTrue(finished)
        XCTAssertEqual(errors.all, [])
        let onDisk = try JSONDecoder().decode([String: String].self, from: XCTUnwrap(contents(path)))
        XCTAssertEqual(onDisk.count, 80, "each set is a locked read-modify-write")
    }

    func testNestedWithLockThrowsButSetInsideWorks() throws {
        let storage = FileTokenStorage(path: path)
        let other = FileTokenStorage(path: path)
        try storage.withLock("refresh") {
            try storage.set("refresh", "inside")
            XCTAssertThrowsError(try other.withLock("access") { () }) { error in
                XCTAssertEqual((error as? StorageError)?.kind, .reentrantLock)
            }
        }
        XCTAssertEqual(try storage.get("refresh"), "inside")
        XCTAssertEqual(try storage.withLock("refresh") { "free" }, "free")
    }
}
