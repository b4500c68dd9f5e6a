// Windows only. On Linux the test-only target PlatformShims compiles this same file (PROFIREST_SHIMS) against
// declaration shims of WinSDK (Sources/WindowsShims); see Tests/PlatformShimsTests.
#if os(Windows) || PROFIREST_SHIMS
import Foundation
#if PROFIREST_SHIMS
import WindowsShims
#else
import WinSDK
#endif

/// Whole-file reads and crash-safe replacement of a file readable by its owner only: the token file and the outbox
/// journal. The new content is written to a temporary file created with an owner-only ACL (OwnerOnlySecurity),
/// flushed, and renamed over the old file; a rename on the same volume keeps the temporary file's ACL, so the file
/// is never readable by another account, not even briefly.
///
/// What is promised: a reader, and a crash of this process or of Windows, sees the old content or the new one, never a
/// mix or a partial file — the new content is on the disk (FlushFileBuffers) before the single MoveFileExW that puts it
/// in place. After a power cut the old content may be back: Windows documents no call that makes a rename itself
/// durable (MOVEFILE_WRITE_THROUGH only makes a move done as copy and delete wait for its flush, and this one is a
/// rename within one folder, so it is not used). The file is flushed once more after the rename, best effort, which on
/// NTFS also writes out the file-system log that holds the rename; that is observed behaviour, not documented. The
/// POSIX side fsyncs the folder after the rename, which the file systems there document as making it durable.
///
/// Paths go to the Win32 calls in their `\\?\` form (LongPath), so a file deeper than 260 characters works.
enum TokenFile {
    /// The file's bytes, or nil when it does not exist. Tightens a file of this user that others could read.
    static func load(path: String) throws -> Data? {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return nil }
        // As on POSIX: a file this library did not write (copied in, restored from a backup, written by hand) gets the
        // owner-only ACL before its secrets are read, best effort, if it belongs to this process's user (another
        // account's file is left as it is, see `tighten`). A folder is not a token file: its ACL is left alone, and
        // reading it fails below.
        if !isFolder.boolValue { OwnerOnlySecurity.tighten(path: path) }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw StorageError(
                kind: .unreadable, path: path, reason: "the file cannot be read; check its permissions")
        }
    }

    /// Replaces the file so that readers and crashes see either the old or the new content, never a mix.
    /// `beforeRename` and `afterRename` run when the new content is flushed in its temporary file, and when it has
    /// taken the file's place (the outbox journal's kill points for the soak; nothing for other callers).
    static func replace(
        path: String, with data: Data, beforeRename: () -> Void = {}, afterRename: () -> Void = {}
    ) throws {
        // Beside the file, so that the rename stays on one volume.
        let temporary = path + ".tmp-" + Crypto.randomBytes(6).map { String($0, radix: 16) }.joined()
        try OwnerOnlySecurity.withAttributes(path: path, failure: .unwritable) { attributes in
            let opened = LongPath.with(temporary) {
                CreateFileW(
                    $0, DWORD(GENERIC_WRITE), 0, &attributes, DWORD(CREATE_NEW), DWORD(FILE_ATTRIBUTE_NORMAL), nil)
            }
            guard let handle = opened, handle != INVALID_HANDLE_VALUE else {
                throw unwritable(path, "CreateFileW", GetLastError())
            }
            var renamed = false
            defer { if !renamed { _ = LongPath.with(temporary) { DeleteFileW($0) } } }
            do {
                defer { _ = CloseHandle(handle) }
                try writeAll(handle, data, path: path)
                guard FlushFileBuffers(handle) else { throw unwritable(path, "FlushFileBuffers", GetLastError()) }
            }
            beforeRename()
            if let code = move(temporary, over: path) { throw unwritable(path, "MoveFileExW", code) }
            renamed = true
            flushAfterRename(path)
            afterRename()
        }
    }

    /// How long `move` keeps trying while another process holds one of the two files open, in milliseconds.
    static let moveRetryBudget: DWORD = 2_000

    /// Renames `from` over `to`; nil when done, else the last Windows error. An antivirus scanner or the search
    /// indexer opens a file that was just written to read it, and while it holds the new temporary file or the old
    /// token file open without FILE_SHARE_DELETE the rename fails with ERROR_SHARING_VIOLATION or
    /// ERROR_ACCESS_DENIED; they let go within moments, so those two are tried again (waits of 10 ms doubling to
    /// 250 ms, `moveRetryBudget` in all), as node's graceful-fs and VS Code retry a rename on Windows for the same
    /// cause. A lasting ACCESS_DENIED (a read-only file, a folder without write access) costs that wait before it is
    /// reported.
    private static func move(_ from: String, over to: String) -> DWORD? {
        var waited: DWORD = 0
        var delay: DWORD = 10
        while true {
            let moved = LongPath.with(from) { source in
                LongPath.with(to) { target in MoveFileExW(source, target, DWORD(MOVEFILE_REPLACE_EXISTING)) }
            }
            if moved { return nil }
            let code = GetLastError()
            let transient = code == DWORD(ERROR_SHARING_VIOLATION) || code == DWORD(ERROR_ACCESS_DENIED)
            guard transient, waited < moveRetryBudget else { return code }
            Sleep(delay)
            waited += delay
            delay = min(delay * 2, 250)
        }
    }

    /// Flushes the renamed file once more (see the type's comment); a failure is ignored, the content is in place.
    private static func flushAfterRename(_ path: String) {
        let opened = LongPath.with(path) {
            CreateFileW(
                $0, DWORD(GENERIC_WRITE), DWORD(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE), nil,
                DWORD(OPEN_EXISTING), DWORD(FILE_ATTRIBUTE_NORMAL), nil)
        }
        guard let handle = opened, handle != INVALID_HANDLE_VALUE else { return }
        _ = FlushFileBuffers(handle)
        _ = CloseHandle(handle)
    }

    private static func writeAll(_ handle: HANDLE, _ data: Data, path: String) throws {
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                var written: DWORD = 0
                let chunk = DWORD(min(raw.count - offset, 1 << 30))
                guard WriteFile(handle, raw.baseAddress! + offset, chunk, &written, nil), written > 0 else {
                    throw unwritable(path, "WriteFile", GetLastError())
                }
                offset += Int(written)
            }
        }
    }

    private static func unwritable(_ path: String, _ call: String, _ code: DWORD) -> StorageError {
        StorageError(
            kind: .unwritable, path: path,
            reason: "the file cannot be written (\(call) failed, Windows error \(code)); "
                + "check that its folder exists, is writable and the disk is not full")
    }
}
#endif
