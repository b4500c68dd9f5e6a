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

/// An existing append-only file of the outbox journal, used under the journal's lock: reads at an offset, writes at
/// the end, cuts a torn tail, and makes what was written durable. The file is created (owner-only) and replaced
/// only through `TokenFile.replace`, so this never creates one. It stays open from one locked section to the next
/// (`staysOpenBetweenSections`) until the path names another file (`sizeIfCurrent`).
final class JournalFile {
    private let fd: Int32
    let path: String
    /// The file's identity: while this descriptor holds it open, no other file can have it.
    private let device: UInt64
    private let inode: UInt64

    /// A replacement of the file by another process (a compaction) is a rename over its path, which a descriptor
    /// held open survives on POSIX: `sizeIfCurrent` tells when to open the new file.
    static let staysOpenBetweenSections = true

    private init(fd: Int32, path: String, device: UInt64, inode: UInt64) {
        self.fd = fd
        self.path = path
        self.device = device
        self.inode = inode
    }

    deinit { close(fd) }

    /// The file opened for reading and writing, or nil when it does not exist. Tightens a file that others could read.
    static func open(path: String) throws -> JournalFile? {
        let fd = systemOpen(path, O_RDWR | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            throw TokenFile.unreadable(path, code)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw TokenFile.unreadable(path, code)
        }
        if info.st_mode & 0o077 != 0 { _ = fchmod(fd, 0o600) }
        return JournalFile(
            fd: fd, path: path, device: UInt64(truncatingIfNeeded: info.st_dev),
            inode: UInt64(truncatingIfNeeded: info.st_ino))
    }

    /// The file's length when `path` still names this file (one `stat`), or nil when it names another one or none:
    /// another process replaced or removed it since this one was opened.
    func sizeIfCurrent() -> Int? {
        var info = stat()
        guard stat(path, &info) == 0, UInt64(truncatingIfNeeded: info.st_dev) == device,
            UInt64(truncatingIfNeeded: info.st_ino) == inode
        else { return nil }
        return Int(info.st_size)
    }

    /// The file's length in bytes.
    func size() throws -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw TokenFile.unreadable(path, errno) }
        return Int(info.st_size)
    }

    /// Up to `count` bytes from `offset` (fewer at the end of the file).
    func read(from offset: Int, count: Int) throws -> Data {
        var data = Data(count: count)
        var done = 0
        while done < count {
            let n = data.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress! + done, count - done, off_t(offset + done))
            }
            if n > 0 {
                done += n
            } else if n == 0 {
                break
            } else if errno != EINTR {
                throw TokenFile.unreadable(path, errno)
            }
        }
        return data.prefix(done)
    }

    /// Writes `data` at `offset` (the end of the file as last read, under the lock).
    func write(_ data: Data, at offset: Int) throws {
        try data.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset + done))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw TokenFile.unwritable(path, errno)
                }
                done += n
            }
        }
    }

    /// Cuts the file at `length`: a record torn by a crash, or one whose write failed half way.
    func truncate(to length: Int) throws {
        while ftruncate(fd, off_t(length)) != 0 {
            if errno != EINTR { throw TokenFile.unwritable(path, errno) }
        }
    }

    /// Makes what was written durable before the caller is told so (fsync; F_FULLFSYNC on Apple platforms, whose
    /// plain fsync stops at the drive's cache). An append changes the file's size, so fdatasync would write the same
    /// metadata as fsync: one call for every platform.
    func sync() throws {
        guard TokenFile.fullSync(fd) == 0 else { throw TokenFile.unwritable(path, errno) }
    }

    /// Ends this process at once, as a power cut or `kill -9` would: the soak's kill points inside an append and a
    /// compaction (`OutboxJournal.TestHooks`).
    static func killSelf() -> Never {
        kill(getpid(), SIGKILL)
        while true { pause() }
    }
}

/// `open(2)`, named apart from `JournalFile.open(path:)`.
private func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
    open(path, flags)
}
#endif
