import Foundation
import WindowsShims
import XCTest
@testable import PlatformShims

/// The owner-only ACL of the Windows token file, its temporary file and the lock file
/// (OwnerOnlySecurity+Windows.swift, TokenFile+Windows.swift, FileLock+Windows.swift — the library's files, compiled
/// unchanged in PlatformShims) against WinSDK shims that record the security descriptor each file is created with.
/// What this cannot show: that Windows itself enforces that descriptor, and that the SDDL string converts there as
/// the documentation says.
final class WindowsOwnerOnlyTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("profirest-acl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// The one descriptor every file is to be created with: protected DACL, one allow-all entry for the user.
    private let ownerOnly = SecurityDescriptorModel(
        owner: nil, group: nil, daclFlags: ["P"],
        dacl: [AccessControlEntry(type: "A", flags: "", rights: "FA", sid: WindowsShimUser.sid)])

    private func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    private func assertOwnerOnly(_ security: FileSecurity?, _ what: String, line: UInt = #line) {
        guard case .descriptor(let descriptor)? = security else {
            return XCTFail("\(what) was created with \(String(describing: security)), not a descriptor", line: line)
        }
        XCTAssertEqual(descriptor, ownerOnly, what, line: line)
        XCTAssertTrue(descriptor.daclIsProtected, "\(what): nothing inherited from the folder", line: line)
        XCTAssertEqual(descriptor.dacl?.count, 1, "\(what): exactly one entry", line: line)
        let others: Set = ["WD", "BU", "AU", "IU", "S-1-1-0", "S-1-5-32-545", "S-1-5-11"]
        XCTAssertTrue(
            (descriptor.dacl ?? []).allSatisfy { !others.contains($0.sid) }, "\(what): no Everyone or Users",
            line: line)
    }

    func testTokenFileAndItsTemporaryFileAreCreatedOwnerOnly() throws {
        let path = folder.appendingPathComponent("tokens.json").path
        let handles = WindowsFiles.shared.openHandles
        let before = WindowsShimThread.counts
        let (calls, error) = WindowsShimThread.tracing {
            try TokenFile.replace(path: path, with: Data("{\"refresh\":\"r1\"}".utf8))
        }
        XCTAssertNil(error)
        XCTAssertEqual(try TokenFile.load(path: path), Data("{\"refresh\":\"r1\"}".utf8))
        XCTAssertEqual(
            calls,
            [
                "OpenProcessToken", "GetTokenInformation", "GetTokenInformation", "ConvertSidToStringSidW", "LocalFree",
                "CloseHandle", "ConvertStringSecurityDescriptorToSecurityDescriptorW", "CreateFileW", "WriteFile",
                "FlushFileBuffers", "CloseHandle", "MoveFileExW", "LocalFree",
            ],
            "the descriptor outlives CreateFileW; flushed and closed before the rename; both allocations freed")

        assertOwnerOnly(WindowsFiles.shared.security(atPath: path), "the token file")
        let created = WindowsFiles.shared.creations(inFolder: folder.path)
        XCTAssertEqual(created.count, 1, "only the temporary file is created; the token file is it, renamed")
        XCTAssertTrue(created.first?.path.hasPrefix(path + ".tmp-") ?? false, "\(created)")
        assertOwnerOnly(created.first?.security, "the temporary file")
        XCTAssertEqual(try files(), ["tokens.json"], "no temporary file is left")

        let after = WindowsShimThread.counts
        XCTAssertEqual(after.allocations - before.allocations, 2, "the SID string and the security descriptor")
        XCTAssertEqual(after.frees - before.frees, 2, "both freed with LocalFree")
        XCTAssertEqual(after.invalidFrees, before.invalidFrees)
        XCTAssertEqual(after.invalidDescriptorUses, before.invalidDescriptorUses)
        XCTAssertEqual(WindowsFiles.shared.openHandles, handles, "the token and file handles are closed")
    }

    func testAFileWrittenByAnOlderVersionBecomesOwnerOnlyAtTheNextWrite() throws {
        let path = folder.appendingPathComponent("tokens.json").path
        // Written as Foundation did before: the folder's inherited permissions.
        try Data("{}".utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertNil(WindowsFiles.shared.security(atPath: path))
        try TokenFile.replace(path: path, with: Data("{\"a\":\"1\"}".utf8))
        assertOwnerOnly(WindowsFiles.shared.security(atPath: path), "the replaced token file")
        try TokenFile.replace(path: path, with: Data("{\"a\":\"2\"}".utf8))
        assertOwnerOnly(WindowsFiles.shared.security(atPath: path), "the token file replaced again")
        XCTAssertEqual(try TokenFile.load(path: path), Data("{\"a\":\"2\"}".utf8))
        let created = WindowsFiles.shared.creations(inFolder: folder.path)
        XCTAssertEqual(created.count, 2, "one temporary file per write")
        for creation in created { assertOwnerOnly(creation.security, "temporary file \(creation.path)") }
        XCTAssertEqual(try files(), ["tokens.json"])
    }

    func testLockFileIsCreatedOwnerOnly() throws {
        let path = folder.appendingPathComponent("tokens.json.lock").path
        let handles = WindowsFiles.shared.openHandles
        let before = WindowsShimThread.counts
        try FileLock.acquire(path: path).release()
        try FileLock.acquire(path: path).release()  // the existing file is opened, not created again
        let created = WindowsFiles.shared.creations(inFolder: folder.path)
        XCTAssertEqual(created.map(\.path), [path])
        assertOwnerOnly(created.first?.security, "the lock file")
        let after = WindowsShimThread.counts
        XCTAssertEqual(after.allocations - before.allocations, 4)
        XCTAssertEqual(after.frees - before.frees, 4)
        XCTAssertEqual(WindowsFiles.shared.openHandles, handles)
    }

    /// Each call that builds the descriptor, failing: the write stops with a storage error before any file exists,
    /// an existing file keeps its content, and whatever was allocated is freed.
    func testAFailedACLCallIsAStorageErrorAndWritesNothing() throws {
        let path = folder.appendingPathComponent("tokens.json").path
        let calls = [
            "OpenProcessToken", "GetTokenInformation", "ConvertSidToStringSidW",
            "ConvertStringSecurityDescriptorToSecurityDescriptorW",
        ]
        for call in calls {
            for existing in [false, true] {
                try? FileManager.default.removeItem(atPath: path)
                if existing { try TokenFile.replace(path: path, with: Data("{\"refresh\":\"old\"}".utf8)) }
                let handles = WindowsFiles.shared.openHandles
                let creations = WindowsFiles.shared.creations(inFolder: folder.path).count
                let before = WindowsShimThread.counts
                XCTAssertThrowsError(
                    try WindowsShimThread.failing([call: ERROR_ACCESS_DENIED]) {
                        try TokenFile.replace(path: path, with: Data("{\"refresh\":\"secret-r2\"}".utf8))
                    }
                ) { error in
                    guard let error = error as? StorageError else { return XCTFail("\(call): \(error)") }
                    XCTAssertEqual(error.kind, .unwritable, call)
                    XCTAssertEqual(error.path, path, call)
                    XCTAssertTrue(error.reason.contains("\(call) failed, Windows error 5"), error.reason)
                    XCTAssertFalse(error.description.contains("secret"), "no token in the message")
                }
                XCTAssertEqual(
                    WindowsFiles.shared.creations(inFolder: folder.path).count, creations, "\(call): no file created")
                XCTAssertEqual(try files(), existing ? ["tokens.json"] : [], call)
                if existing { XCTAssertEqual(try TokenFile.load(path: path), Data("{\"refresh\":\"old\"}".utf8), call) }
                let after = WindowsShimThread.counts
                XCTAssertEqual(after.allocations - before.allocations, after.frees - before.frees, "\(call): all freed")
                XCTAssertEqual(after.invalidFrees, before.invalidFrees, call)
                XCTAssertEqual(WindowsFiles.shared.openHandles, handles, "\(call): the token handle is closed")
            }
        }
    }

    func testAFailedLockACLIsALockErrorAndCreatesNoLockFile() {
        let path = folder.appendingPathComponent("tokens.json.lock").path
        XCTAssertThrowsError(
            try WindowsShimThread.failing(
                ["ConvertStringSecurityDescriptorToSecurityDescriptorW": ERROR_INVALID_PARAMETER]
            ) {
                try FileLock.acquire(path: path)
            }
        ) { error in
            XCTAssertEqual((error as? StorageError)?.kind, .lockFailed)
            XCTAssertTrue((error as? StorageError)?.reason.contains("Windows error 87") ?? false, "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    /// A failure after the temporary file exists: it is deleted, the old content stays, and the descriptor is freed.
    func testAFailedWriteFlushOrRenameLeavesTheOldFileAndNoTemporaryFile() throws {
        let path = folder.appendingPathComponent("tokens.json").path
        try TokenFile.replace(path: path, with: Data("{\"refresh\":\"old\"}".utf8))
        let diskFull: DWORD = 112  // ERROR_DISK_FULL
        for call in ["CreateFileW", "WriteFile", "FlushFileBuffers", "MoveFileExW"] {
            let handles = WindowsFiles.shared.openHandles
            let before = WindowsShimThread.counts
            XCTAssertThrowsError(
                try WindowsShimThread.failing([call: diskFull]) {
                    try TokenFile.replace(path: path, with: Data("{\"refresh\":\"new\"}".utf8))
                }
            ) { error in
                XCTAssertEqual((error as? StorageError)?.kind, .unwritable, call)
                let reason = (error as? StorageError)?.reason ?? "\(error)"
                XCTAssertTrue(reason.contains("\(call) failed, Windows error 112"), reason)
            }
            XCTAssertEqual(try files(), ["tokens.json"], "\(call): the temporary file is deleted")
            XCTAssertEqual(try TokenFile.load(path: path), Data("{\"refresh\":\"old\"}".utf8), call)
            assertOwnerOnly(WindowsFiles.shared.security(atPath: path), "\(call): the old file")
            let after = WindowsShimThread.counts
            XCTAssertEqual(after.allocations - before.allocations, after.frees - before.frees, "\(call): all freed")
            XCTAssertEqual(WindowsFiles.shared.openHandles, handles, call)
        }
    }

    /// The shim's checks are not vacuous: a descriptor freed before CreateFileW, and a second LocalFree, are caught.
    func testTheShimCatchesADescriptorFreedTooEarlyAndADoubleFree() {
        var descriptor: PSECURITY_DESCRIPTOR? = nil
        let converted = "D:(A;;GA;;;WD)".withCString(encodedAs: UTF16.self) {
            ConvertStringSecurityDescriptorToSecurityDescriptorW($0, DWORD(SDDL_REVISION_1), &descriptor, nil)
        }
        XCTAssertTrue(converted)
        XCTAssertNil(LocalFree(descriptor))
        let before = WindowsShimThread.counts
        var attributes = SECURITY_ATTRIBUTES(
            nLength: DWORD(MemoryLayout<SECURITY_ATTRIBUTES>.size), lpSecurityDescriptor: descriptor,
            bInheritHandle: false)
        let path = folder.appendingPathComponent("early").path
        let handle = path.withCString(encodedAs: UTF16.self) {
            CreateFileW($0, DWORD(GENERIC_WRITE), 0, &attributes, DWORD(CREATE_NEW), DWORD(FILE_ATTRIBUTE_NORMAL), nil)
        }
        XCTAssertEqual(handle, INVALID_HANDLE_VALUE)
        XCTAssertEqual(GetLastError(), ERROR_INVALID_SECURITY_DESCR)
        XCTAssertNotNil(LocalFree(descriptor), "a second LocalFree fails and returns the handle")
        let after = WindowsShimThread.counts
        XCTAssertEqual(after.invalidDescriptorUses - before.invalidDescriptorUses, 1)
        XCTAssertEqual(after.invalidFrees - before.invalidFrees, 1)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testTheShimParsesSDDLAsDocumented() {
        var descriptor: PSECURITY_DESCRIPTOR? = nil
        let sddl = "O:BAD:AI(A;OICI;FA;;;SY)(D;;FW;;;WD)"
        XCTAssertTrue(
            sddl.withCString(encodedAs: UTF16.self) {
                ConvertStringSecurityDescriptorToSecurityDescriptorW($0, DWORD(SDDL_REVISION_1), &descriptor, nil)
            })
        defer { LocalFree(descriptor) }
        var attributes = SECURITY_ATTRIBUTES(
            nLength: DWORD(MemoryLayout<SECURITY_ATTRIBUTES>.size), lpSecurityDescriptor: descriptor,
            bInheritHandle: false)
        let path = folder.appendingPathComponent("parsed").path
        let handle = path.withCString(encodedAs: UTF16.self) {
            CreateFileW($0, DWORD(GENERIC_WRITE), 0, &attributes, DWORD(CREATE_NEW), DWORD(FILE_ATTRIBUTE_NORMAL), nil)
        }
        XCTAssertNotEqual(handle, INVALID_HANDLE_VALUE)
        CloseHandle(handle)
        XCTAssertEqual(
            WindowsFiles.shared.security(atPath: path),
            .descriptor(
                SecurityDescriptorModel(
                    owner: "BA", group: nil, daclFlags: ["AI"],
                    dacl: [
                        AccessControlEntry(type: "A", flags: "OICI", rights: "FA", sid: "SY"),
                        AccessControlEntry(type: "D", flags: "", rights: "FW", sid: "WD"),
                    ])))
        for malformed in ["D:P(A;;FA;;S-1-5-18)", "D:X(A;;FA;;;SY)", "D:P(A;;FA;;;nobody)", "Q:x"] {
            var other: PSECURITY_DESCRIPTOR? = nil
            XCTAssertFalse(
                malformed.withCString(encodedAs: UTF16.self) {
                    ConvertStringSecurityDescriptorToSecurityDescriptorW($0, DWORD(SDDL_REVISION_1), &other, nil)
                }, malformed)
            XCTAssertEqual(GetLastError(), ERROR_INVALID_PARAMETER, malformed)
        }
    }
}
