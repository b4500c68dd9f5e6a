import Foundation
import WindowsShims
import XCTest
@testable import PlatformShims

/// The owner-only ACL of the Windows token file, its temporary file and the lock file
/// (OwnerOnlySecurity+Windows.swift, TokenFile+Windows.swift, FileLock+Windows.swift — the library's files, compiled
/// unchanged in PlatformShims) against WinSDK shims that record the security descriptor and owner each file is created
/// with, and the DACL SetNamedSecurityInfoW gives an existing file of our own user when it is read.
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

    /// One `TokenFile.load`, traced: what it returned or threw, the WinSDK calls it made, and what it allocated,
    /// freed and left open.
    private struct TracedLoad {
        var loaded: Data?
        var calls: [String]
        var error: (any Error)?
        var allocated: Int
        var freed: Int
        var invalidFrees: Int
        var invalidDescriptorUses: Int
        var handlesLeftOpen: Int
    }

    private func tracedLoad(_ path: String, failing faults: [String: DWORD] = [:]) -> TracedLoad {
        let handles = WindowsFiles.shared.openHandles
        let before = WindowsShimThread.counts
        var loaded: Data?
        let (calls, error) = WindowsShimThread.tracing {
            try WindowsShimThread.failing(faults) { loaded = try TokenFile.load(path: path) }
        }
        let after = WindowsShimThread.counts
        return TracedLoad(
            loaded: loaded, calls: calls, error: error, allocated: after.allocations - before.allocations,
            freed: after.frees - before.frees, invalidFrees: after.invalidFrees - before.invalidFrees,
            invalidDescriptorUses: after.invalidDescriptorUses - before.invalidDescriptorUses,
            handlesLeftOpen: WindowsFiles.shared.openHandles - handles)
    }

    /// The load freed all it allocated, freed nothing twice or foreign, used no freed descriptor, and closed its handles.
    private func assertNothingLeaked(_ load: TracedLoad, _ what: String, line: UInt = #line) {
        XCTAssertEqual(load.allocated, load.freed, "\(what): all freed", line: line)
        XCTAssertEqual(load.invalidFrees, 0, what, line: line)
        XCTAssertEqual(load.invalidDescriptorUses, 0, what, line: line)
        XCTAssertEqual(load.handlesLeftOpen, 0, "\(what): the token handle is closed", line: line)
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
        XCTAssertEqual(
            calls.filter { $0 != "GetFullPathNameW" },  // each path's own (WindowsFileTests.testLongPaths)
            [
                "OpenProcessToken", "GetTokenInformation", "GetTokenInformation", "ConvertSidToStringSidW", "LocalFree",
                "ConvertStringSecurityDescriptorToSecurityDescriptorW", "CreateFileW", "WriteFile", "FlushFileBuffers",
                "CloseHandle", "MoveFileExW", "CreateFileW", "FlushFileBuffers", "CloseHandle", "LocalFree",
                "CloseHandle",
            ],
            "the descriptor outlives CreateFileW; flushed and closed before the rename, flushed again after it; both "
                + "allocations freed")

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
        XCTAssertEqual(try TokenFile.load(path: path), Data("{\"refresh\":\"r1\"}".utf8))
        assertOwnerOnly(WindowsFiles.shared.security(atPath: path), "the token file, read")
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
                    try WindowsShimThread.failing([call: DWORD(ERROR_ACCESS_DENIED)]) {
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
                ["ConvertStringSecurityDescriptorToSecurityDescriptorW": DWORD(ERROR_INVALID_PARAMETER)]
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

    /// Makes a file the way another program might: through CreateFileW with the descriptor of `sddl` (nil: none, so
    /// the folder's inherited permissions), or with Foundation, which the shims do not see at all (`viaFoundation`).
    private func makeForeignFile(_ path: String, sddl: String?, viaFoundation: Bool = false, _ bytes: Data) throws {
        if viaFoundation { return try bytes.write(to: URL(fileURLWithPath: path)) }
        var descriptor: PSECURITY_DESCRIPTOR? = nil
        if let sddl {
            XCTAssertTrue(
                sddl.withCString(encodedAs: UTF16.self) {
                    ConvertStringSecurityDescriptorToSecurityDescriptorW($0, DWORD(SDDL_REVISION_1), &descriptor, nil)
                }, sddl)
        }
        defer { LocalFree(descriptor) }
        var attributes = SECURITY_ATTRIBUTES(
            nLength: DWORD(MemoryLayout<SECURITY_ATTRIBUTES>.size), lpSecurityDescriptor: descriptor,
            bInheritHandle: false)
        let handle = path.withCString(encodedAs: UTF16.self) { name in
            withUnsafeMutablePointer(to: &attributes) {
                CreateFileW(
                    name, DWORD(GENERIC_WRITE), 0, sddl == nil ? nil : $0, DWORD(CREATE_NEW),
                    DWORD(FILE_ATTRIBUTE_NORMAL), nil)
            }
        }
        XCTAssertNotEqual(handle, INVALID_HANDLE_VALUE)
        defer { CloseHandle(handle) }
        var written: DWORD = 0
        XCTAssertTrue(bytes.withUnsafeBytes { WriteFile(handle, $0.baseAddress, DWORD($0.count), &written, nil) })
    }

    /// Files of our own user that this library did not write — copied in, restored from a backup, written by hand —
    /// with permissions wider than owner-only.
    private let foreignFiles: [(what: String, sddl: String?, viaFoundation: Bool)] = [
        ("written by Foundation (no descriptor the shims know of)", nil, true),
        ("created with no descriptor: the folder's inherited permissions", nil, false),
        ("created with entries inherited from the folder", "D:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)(A;ID;FR;;;BU)", false),
        ("ours, open to another user and readable by Everyone", "D:P(A;;FA;;;S-1-5-21-1-2-3-1002)(A;;FR;;;WD)", false),
    ]

    /// Another account, and what its token file might allow: a service running as LocalSystem whose file
    /// administrators may read, and another user's file readable by Everyone.
    private let otherOwners: [(what: String, owner: String, sddl: String?)] = [
        ("a service's file (LocalSystem)", "S-1-5-18", "D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;FR;;;BU)"),
        ("another user's file", "S-1-5-21-1-2-3-1002", "D:P(A;;FA;;;S-1-5-21-1-2-3-1002)(A;;FR;;;WD)"),
        ("another user's file with the folder's permissions", "S-1-5-21-1-2-3-1002", nil),
    ]

    /// Like fchmod(0600) on POSIX: reading a token or journal file of our own user first gives it the owner-only DACL,
    /// whatever it had, and returns its bytes unchanged; nothing is created, everything allocated is freed.
    func testAnExistingWideFileIsMadeOwnerOnlyWhenRead() throws {
        let secret = Data("{\"refresh\":\"secret-r1\",\"other\":\"é\"}".utf8)
        for (index, file) in foreignFiles.enumerated() {
            let path = folder.appendingPathComponent("tokens-\(index).json").path
            try makeForeignFile(path, sddl: file.sddl, viaFoundation: file.viaFoundation, secret)
            XCTAssertNotEqual(WindowsFiles.shared.security(atPath: path), .descriptor(ownerOnly), file.what)
            XCTAssertEqual(WindowsFiles.shared.owner(atPath: path), WindowsShimUser.sid, file.what)
            let creations = WindowsFiles.shared.creations(inFolder: folder.path)
            let load = tracedLoad(path)
            XCTAssertNil(load.error, file.what)
            XCTAssertEqual(load.loaded, secret, "\(file.what): the bytes, unchanged")
            XCTAssertEqual(
                load.calls.filter { $0 != "GetFullPathNameW" },
                [
                    "OpenProcessToken", "GetTokenInformation", "GetTokenInformation", "GetNamedSecurityInfoW",
                    "EqualSid", "LocalFree", "ConvertSidToStringSidW", "LocalFree",
                    "ConvertStringSecurityDescriptorToSecurityDescriptorW", "GetSecurityDescriptorDacl",
                    "SetNamedSecurityInfoW", "LocalFree", "CloseHandle",
                ],
                "\(file.what): our own file, so the DACL of the descriptor the library creates files with is set on it")
            assertOwnerOnly(WindowsFiles.shared.security(atPath: path), "\(file.what), once read")
            XCTAssertEqual(WindowsFiles.shared.creations(inFolder: folder.path), creations, "\(file.what): no file made")
            XCTAssertEqual(load.allocated, 3, "\(file.what): the owner, the SID string, the descriptor")
            assertNothingLeaked(load, file.what)
            // Reading again sets the same DACL again, and changes nothing else.
            XCTAssertEqual(try TokenFile.load(path: path), secret, file.what)
            assertOwnerOnly(WindowsFiles.shared.security(atPath: path), "\(file.what), read twice")
            XCTAssertEqual(WindowsFiles.shared.owner(atPath: path), WindowsShimUser.sid, "\(file.what): still ours")
        }
        XCTAssertEqual(try files(), foreignFiles.indices.map { "tokens-\($0).json" })
    }

    /// Unlike fchmod, a new DACL would take access away from the file's owner: an administrator reading a service's
    /// token file would lock the service out. So another account's file is read as it is: its bytes returned, its DACL
    /// untouched, and only its owner read (and freed) on the way.
    func testAnotherAccountsFileIsReadButNotTightened() throws {
        let secret = Data("{\"refresh\":\"secret-r1\"}".utf8)
        for (index, file) in otherOwners.enumerated() {
            let path = folder.appendingPathComponent("service-\(index).json").path
            try makeForeignFile(path, sddl: file.sddl, secret)
            WindowsFiles.shared.setOwner(file.owner, atPath: path)
            let original = WindowsFiles.shared.security(atPath: path)
            let load = tracedLoad(path)
            XCTAssertNil(load.error, file.what)
            XCTAssertEqual(load.loaded, secret, "\(file.what): the bytes, unchanged")
            XCTAssertEqual(
                load.calls.filter { $0 != "GetFullPathNameW" },
                [
                    "OpenProcessToken", "GetTokenInformation", "GetTokenInformation", "GetNamedSecurityInfoW",
                    "EqualSid", "LocalFree", "CloseHandle",
                ],
                "\(file.what): the owner is compared, and no DACL is made or set")
            XCTAssertEqual(WindowsFiles.shared.security(atPath: path), original, "\(file.what): the DACL is as it was")
            XCTAssertEqual(WindowsFiles.shared.owner(atPath: path), file.owner, "\(file.what): the owner is as it was")
            XCTAssertEqual(load.allocated, 1, "\(file.what): the descriptor holding the owner")
            assertNothingLeaked(load, file.what)
        }
    }

    /// Best effort: whichever call fails — reading or comparing the file's owner (GetNamedSecurityInfoW needs
    /// READ_CONTROL), any call that builds the descriptor, or SetNamedSecurityInfoW itself — the bytes we may read
    /// are still returned, the file keeps its DACL, and nothing leaks. An owner that cannot be read or compared is
    /// not taken for ours: no DACL is set then.
    func testAFailedTighteningStillReturnsTheBytes() throws {
        let secret = Data("{\"refresh\":\"secret-r1\"}".utf8)
        let wide = "D:P(A;;FA;;;S-1-5-21-1-2-3-1002)(A;;FR;;;WD)"
        let path = folder.appendingPathComponent("tokens.json").path
        try makeForeignFile(path, sddl: wide, secret)
        XCTAssertEqual(WindowsFiles.shared.owner(atPath: path), WindowsShimUser.sid, "our own file")
        let original = WindowsFiles.shared.security(atPath: path)
        let calls = [
            "OpenProcessToken", "GetTokenInformation", "GetNamedSecurityInfoW", "EqualSid", "ConvertSidToStringSidW",
            "ConvertStringSecurityDescriptorToSecurityDescriptorW", "GetSecurityDescriptorDacl", "SetNamedSecurityInfoW",
        ]
        for call in calls {
            let load = tracedLoad(path, failing: [call: DWORD(ERROR_ACCESS_DENIED)])
            XCTAssertNil(load.error, call)
            XCTAssertEqual(load.loaded, secret, "\(call) failing: the bytes are still read")
            if call == "GetNamedSecurityInfoW" || call == "EqualSid" {
                XCTAssertFalse(load.calls.contains("SetNamedSecurityInfoW"), "\(call) failing: no DACL set, \(load.calls)")
            }
            XCTAssertEqual(WindowsFiles.shared.security(atPath: path), original, "\(call) failing: the DACL is as it was")
            assertNothingLeaked(load, call)
        }
        XCTAssertEqual(try files(), ["tokens.json"])
    }

    /// A missing file is nil, and reading it creates nothing and touches no ACL; a folder in the file's place is an
    /// error, and its ACL is left alone.
    func testReadingAMissingFileOrAFolderChangesNoACL() throws {
        let path = folder.appendingPathComponent("tokens.json").path
        var loaded: Data? = Data("not read".utf8)
        let (calls, error) = WindowsShimThread.tracing { loaded = try TokenFile.load(path: path) }
        XCTAssertNil(error)
        XCTAssertNil(loaded, "a missing file is no data")
        XCTAssertEqual(calls, [], "no security call for a file that is not there")
        XCTAssertEqual(try files(), [])
        XCTAssertEqual(WindowsFiles.shared.creations(inFolder: folder.path), [])
        XCTAssertNil(WindowsFiles.shared.security(atPath: path))

        let inner = folder.appendingPathComponent("tokens-folder").path
        try FileManager.default.createDirectory(atPath: inner, withIntermediateDirectories: false)
        XCTAssertThrowsError(try TokenFile.load(path: inner)) {
            XCTAssertEqual(($0 as? StorageError)?.kind, .unreadable)
        }
        XCTAssertNil(WindowsFiles.shared.security(atPath: inner), "the folder's ACL is not replaced")
    }

    /// The shim's owners: a file created through CreateFileW is its creator's and stays so when renamed, a test can
    /// give it another, and deleting it forgets it. GetNamedSecurityInfoW returns that owner inside memory LocalFree
    /// takes back, EqualSid compares exactly, and a missing file or a SID that is not valid fails.
    func testTheShimModelsFileOwners() throws {
        let ours = folder.appendingPathComponent("ours").path
        let theirs = folder.appendingPathComponent("theirs").path
        try makeForeignFile(ours, sddl: nil, Data("x".utf8))
        try makeForeignFile(theirs, sddl: nil, Data("y".utf8))
        WindowsFiles.shared.setOwner("S-1-5-18", atPath: theirs)
        let before = WindowsShimThread.counts

        var owners: [PSID?] = []
        var descriptors: [PSECURITY_DESCRIPTOR?] = []
        for path in [ours, theirs] {
            var owner: PSID? = nil
            var descriptor: PSECURITY_DESCRIPTOR? = nil
            let status = path.withCString(encodedAs: UTF16.self) {
                GetNamedSecurityInfoW(
                    $0, SE_FILE_OBJECT, DWORD(OWNER_SECURITY_INFORMATION), &owner, nil, nil, nil, &descriptor)
            }
            XCTAssertEqual(status, 0, path)
            owners.append(owner)
            descriptors.append(descriptor)
        }
        var texts: [String] = []
        for owner in owners {
            var text: LPWSTR? = nil
            XCTAssertTrue(ConvertSidToStringSidW(owner, &text))
            texts.append(text.map { String(decodingCString: $0, as: UTF16.self) } ?? "")
            XCTAssertNil(LocalFree(text))
        }
        XCTAssertEqual(texts, [WindowsShimUser.sid, "S-1-5-18"])
        XCTAssertTrue(EqualSid(owners[0], owners[0]))
        XCTAssertTrue(EqualSid(owners[1], owners[1]))
        XCTAssertFalse(EqualSid(owners[0], owners[1]))
        var notASID: [UInt8] = [9, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0]
        XCTAssertFalse(EqualSid(owners[0], &notASID))
        XCTAssertEqual(GetLastError(), DWORD(ERROR_INVALID_SID))
        for descriptor in descriptors { XCTAssertNil(LocalFree(descriptor)) }
        let after = WindowsShimThread.counts
        XCTAssertEqual(after.allocations - before.allocations, 4, "two descriptors, two SID strings")
        XCTAssertEqual(after.frees - before.frees, 4)

        var descriptor: PSECURITY_DESCRIPTOR? = nil
        var owner: PSID? = nil
        let missing = folder.appendingPathComponent("missing").path.withCString(encodedAs: UTF16.self) {
            GetNamedSecurityInfoW(
                $0, SE_FILE_OBJECT, DWORD(OWNER_SECURITY_INFORMATION), &owner, nil, nil, nil, &descriptor)
        }
        XCTAssertEqual(missing, DWORD(ERROR_FILE_NOT_FOUND))
        XCTAssertNil(descriptor)

        // Replacing their file renames our new owner-only temporary file over it: the file is then ours.
        try TokenFile.replace(path: theirs, with: Data("z".utf8))
        XCTAssertEqual(WindowsFiles.shared.owner(atPath: theirs), WindowsShimUser.sid)
        XCTAssertTrue(ours.withCString(encodedAs: UTF16.self) { DeleteFileW($0) })
        XCTAssertNil(WindowsFiles.shared.owner(atPath: ours))
    }

    /// The shim's DACL calls are not vacuous: an ACL from a freed descriptor is caught, and without
    /// PROTECTED_DACL_SECURITY_INFORMATION the DACL it records is not protected.
    func testTheShimChecksTheDACLItIsGiven() throws {
        let path = folder.appendingPathComponent("f").path
        try makeForeignFile(path, sddl: nil, Data("x".utf8))
        var descriptor: PSECURITY_DESCRIPTOR? = nil
        XCTAssertTrue(
            "D:P(A;;FA;;;SY)".withCString(encodedAs: UTF16.self) {
                ConvertStringSecurityDescriptorToSecurityDescriptorW($0, DWORD(SDDL_REVISION_1), &descriptor, nil)
            })
        var present: WindowsBool = false
        var defaulted: WindowsBool = false
        var dacl: PACL? = nil
        XCTAssertTrue(GetSecurityDescriptorDacl(descriptor, &present, &dacl, &defaulted))
        XCTAssertTrue(present.boolValue)
        XCTAssertEqual(dacl?.pointee.AceCount, 1)
        var name = Array(path.utf16) + [0]
        let unprotected = name.withUnsafeMutableBufferPointer {
            SetNamedSecurityInfoW($0.baseAddress, SE_FILE_OBJECT, DWORD(DACL_SECURITY_INFORMATION), nil, nil, dacl, nil)
        }
        XCTAssertEqual(unprotected, 0)
        XCTAssertEqual(
            WindowsFiles.shared.security(atPath: path),
            .descriptor(
                SecurityDescriptorModel(
                    owner: nil, group: nil, daclFlags: [],
                    dacl: [AccessControlEntry(type: "A", flags: "", rights: "FA", sid: "SY")])))
        var missing = Array(folder.appendingPathComponent("missing").path.utf16) + [0]
        let notFound = missing.withUnsafeMutableBufferPointer {
            SetNamedSecurityInfoW($0.baseAddress, SE_FILE_OBJECT, DWORD(DACL_SECURITY_INFORMATION), nil, nil, dacl, nil)
        }
        XCTAssertEqual(notFound, DWORD(ERROR_FILE_NOT_FOUND))

        XCTAssertNil(LocalFree(descriptor))
        let before = WindowsShimThread.counts
        let dangling = name.withUnsafeMutableBufferPointer {
            SetNamedSecurityInfoW($0.baseAddress, SE_FILE_OBJECT, DWORD(DACL_SECURITY_INFORMATION), nil, nil, dacl, nil)
        }
        XCTAssertEqual(dangling, DWORD(ERROR_INVALID_ACL), "an ACL whose descriptor was freed")
        XCTAssertFalse(GetSecurityDescriptorDacl(descriptor, &present, &dacl, &defaulted))
        XCTAssertEqual(GetLastError(), DWORD(ERROR_INVALID_SECURITY_DESCR))
        XCTAssertEqual(WindowsShimThread.counts.invalidDescriptorUses - before.invalidDescriptorUses, 2)
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
        XCTAssertEqual(GetLastError(), DWORD(ERROR_INVALID_SECURITY_DESCR))
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
            XCTAssertEqual(GetLastError(), DWORD(ERROR_INVALID_PARAMETER), malformed)
        }
    }
}
