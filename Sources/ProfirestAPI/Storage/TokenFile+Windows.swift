// Windows only. Access is governed by the user profile's ACLs there, so there is no mode to set; Foundation's atomic
// write replaces the file in one step. On Linux the test-only target PlatformShims compiles this same file
// (PROFIREST_SHIMS); it uses only Foundation, so it runs here as it is.
#if os(Windows) || PROFIREST_SHIMS
import Foundation

enum TokenFile {
    /// The file's bytes, or nil when it does not exist.
    static func load(path: String) throws -> Data? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw StorageError(
                kind: .unreadable, path: path, reason: "the file cannot be read; check its permissions")
        }
    }

    static func replace(path: String, with data: Data) throws {
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw StorageError(
                kind: .unwritable, path: path,
                reason: "the file cannot be written; check that its folder exists and is writable")
        }
    }
}
#endif
