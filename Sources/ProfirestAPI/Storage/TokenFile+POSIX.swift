#if !os(Windows)
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif
import Foundation

/// Whole-file reads and crash-safe replacement of a file readable by its owner only (0600): the token file and
/// the outbox journal.
enum TokenFile {
    /// The file's bytes, or nil when it does not exist. Tightens a file that others could read.
    static func load(path: String) throws -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            throw unreadable(path, code)
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & 0o077 != 0 {
            // Best effort: failing (e.g. not our file) must not block reading tokens we are allowed to read.
            _ = fchmod(fd, 0o600)
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                data.append(contentsOf: buffer[0..<n])
            } else if n == 0 {
                return data
            } else if errno != EINTR {
                throw unreadable(path, errno)
            }
        }
    }

    /// Replaces the file so that readers and crashes see either the old or the new content, never a mix.
    /// `beforeRename` and `afterRename` run when the new content is durable in its temporary file, and when it has
    /// taken the file's place (the outbox journal's kill points for the soak; nothing for other callers).
    static func replace(
        path: String, with data: Data, beforeRename: () -> Void = {}, afterRename: () -> Void = {}
    ) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let suffix = Crypto.randomBytes(6).map { String($0, radix: 16) }.joined()
        let temporary = "\(directory)/.\(name).tmp-\(suffix)"

        // Created 0600 from the start, so the secret is never readable by others, not even briefly.
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw unwritable(path, errno) }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(fd) }
            guard fchmod(fd, 0o600) == 0 else { throw unwritable(path, errno) }
            try writeAll(fd, data, path: path)
            guard fullSync(fd) == 0 else { throw unwritable(path, errno) }
        }
        beforeRename()
        guard rename(temporary, path) == 0 else { throw unwritable(path, errno) }
        renamed = true
        afterRename()
        // Makes the rename itself durable. Best effort: some file systems refuse fsync on directories,
        // and the new content is already in place.
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            _ = fullSync(dirFD)
            close(dirFD)
        }
    }

    private static func writeAll(_ fd: Int32, _ data: Data, path: String) throws {
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw unwritable(path, errno)
                }
                offset += n
            }
        }
    }

    /// On Apple platforms plain fsync stops at the drive's cache; F_FULLFSYNC reaches the medium (FileExtras).
    static func fullSync(_ fd: Int32) -> Int32 {
        if FileExtras.fullSync(fd) { return 0 }
        return fsync(fd)
    }

    /// The error of a token or journal file that cannot be read (also JournalFile's).
    static func unreadable(_ path: String, _ code: Int32) -> StorageError {
        StorageError(
            kind: .unreadable, path: path,
            reason: "the file cannot be read (\(errnoDescription(code))); check its owner and permissions")
    }

    /// The error of a token or journal file that cannot be written (also JournalFile's).
    static func unwritable(_ path: String, _ code: Int32) -> StorageError {
        StorageError(
            kind: .unwritable, path: path,
            reason: "the file cannot be written (\(errnoDescription(code))); "
                + "check that its directory exists, is writable and the disk is not full")
    }
}
#endif
