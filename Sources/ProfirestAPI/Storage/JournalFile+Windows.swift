// Windows only. On Linux the test-only target PlatformShims compiles this same file (PROFIREST_SHIMS), and
// Tests/PlatformShimsTests runs it: it uses nothing but Foundation's FileHandle.
#if os(Windows) || PROFIREST_SHIMS
import Foundation

/// An existing append-only file opened for one locked section of the outbox journal: reads at an offset, writes at
/// the end, cuts a torn tail, and makes what was written durable (FlushFileBuffers, through FileHandle). The file is
/// created with its owner-only ACL and replaced only through `TokenFile.replace`, so this never creates one.
final class JournalFile {
    private let handle: FileHandle
    let path: String

    /// Closed at the end of each locked section: a handle held open could stand in the way of another process's
    /// replacement of the file (a compaction's rename).
    static let staysOpenBetweenSections = false

    private init(handle: FileHandle, path: String) {
        self.handle = handle
        self.path = path
    }

    deinit { try? handle.close() }

    /// The file opened for reading and writing, or nil when it does not exist.
    static func open(path: String) throws -> JournalFile? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let handle = FileHandle(forUpdatingAtPath: path) else {
            throw StorageError(kind: .unreadable, path: path, reason: "the file cannot be opened; check its permissions")
        }
        return JournalFile(handle: handle, path: path)
    }

    /// Never known to be current: the file is opened afresh for each locked section.
    func sizeIfCurrent() -> Int? { nil }

    /// The file's length in bytes.
    func size() throws -> Int {
        do {
            return Int(try handle.seekToEnd())
        } catch {
            throw StorageError(kind: .unreadable, path: path, reason: "the file's length cannot be read")
        }
    }

    /// Up to `count` bytes from `offset` (fewer at the end of the file).
    func read(from offset: Int, count: Int) throws -> Data {
        do {
            try handle.seek(toOffset: UInt64(offset))
            return try handle.read(upToCount: count) ?? Data()
        } catch {
            throw StorageError(kind: .unreadable, path: path, reason: "the file cannot be read; check its permissions")
        }
    }

    /// Writes `data` at `offset` (the end of the file as last read, under the lock).
    func write(_ data: Data, at offset: Int) throws {
        do {
            try handle.seek(toOffset: UInt64(offset))
            try handle.write(contentsOf: data)
        } catch {
            throw Self.unwritable(path)
        }
    }

    /// Cuts the file at `length`: a record torn by a crash, or one whose write failed half way.
    func truncate(to length: Int) throws {
        do { try handle.truncate(atOffset: UInt64(length)) } catch { throw Self.unwritable(path) }
    }

    /// Makes what was written durable before the caller is told so.
    func sync() throws {
        do { try handle.synchronize() } catch { throw Self.unwritable(path) }
    }

    /// Ends this process at once, as a power cut or `kill -9` would (the soak's kill points).
    static func killSelf() -> Never {
        exit(137)
    }

    private static func unwritable(_ path: String) -> StorageError {
        StorageError(
            kind: .unwritable, path: path,
            reason: "the file cannot be written; check that its folder exists, is writable and the disk is not full")
    }
}
#endif
