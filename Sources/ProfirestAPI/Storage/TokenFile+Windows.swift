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
            let opened = wide(temporary) {
                CreateFileW(
                    $0, DWORD(GENERIC_WRITE), 0, &attributes, DWORD(CREATE_NEW), DWORD(FILE_ATTRIBUTE_NORMAL), nil)
            }
            guard let handle = opened, handle != INVALID_HANDLE_VALUE else {
                throw unwritable(path, "CreateFileW", GetLastError())
            }
            var renamed = false
            defer { if !renamed { _ = wide(temporary) { DeleteFileW($0) } } }
            do {
                defer { _ = CloseHandle(handle) }
                try writeAll(handle, data, path: path)
                guard FlushFileBuffers(handle) else { throw unwritable(path, "FlushFileBuffers", GetLastError()) }
            }
            beforeRename()
            let moved = wide(temporary) { from in
                wide(path) { to in MoveFileExW(from, to, DWORD(MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) }
            }
            guard moved else { throw unwritable(path, "MoveFileExW", GetLastError()) }
            renamed = true
            afterRename()
        }
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

    private static func wide<T>(_ string: String, _ body: (LPCWSTR) -> T) -> T {
        string.withCString(encodedAs: UTF16.self, body)
    }

    private static func unwritable(_ path: String, _ call: String, _ code: DWORD) -> StorageError {
        StorageError(
            kind: .unwritable, path: path,
            reason: "the file cannot be written (\(call) failed, Windows error \(code)); "
                + "check that its folder exists, is writable and the disk is not full")
    }
}
#endif
