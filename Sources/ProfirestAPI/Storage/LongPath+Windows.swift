// Windows only. On Linux the test-only target PlatformShims compiles this same file (PROFIREST_SHIMS) against
// declaration shims of WinSDK (Sources/WindowsShims); see Tests/PlatformShimsTests.
#if os(Windows) || PROFIREST_SHIMS
#if PROFIREST_SHIMS
import WindowsShims
#else
import WinSDK
#endif

/// Paths as the library hands them to the Win32 file and security calls it makes itself (CreateFileW, MoveFileExW,
/// DeleteFileW, Get/SetNamedSecurityInfoW): absolute and with the `\\?\` prefix, so that a token or outbox file
/// deeper than MAX_PATH (260 characters, terminating NUL included) works. Without the prefix those calls fail for such
/// a path unless the app opted in to long paths (a `longPathAware` manifest and the LongPathsEnabled policy, Windows
/// 10 1607 and later), which a library cannot count on
/// (https://learn.microsoft.com/en-us/windows/win32/fileio/maximum-file-path-limitation). Foundation prefixes the
/// paths of its own calls the same way, so `Data(contentsOf:)` and `FileManager` need nothing.
///
/// A `\\?\` path is passed to the file system as it is — no `/` to `\`, no `.` or `..`, no relative parts — so the
/// path is first made absolute and normalised by GetFullPathNameW (forward slashes too). A UNC path
/// (`\\server\share\…`) becomes `\\?\UNC\server\share\…`; a path already in the `\\?\` or `\\.\` form is kept.
enum LongPath {
    /// Runs `body` with the extended-length form of `path` as a NUL-terminated UTF-16 string.
    static func with<T>(_ path: String, _ body: (LPCWSTR) throws -> T) rethrows -> T {
        try extended(path).withCString(encodedAs: UTF16.self, body)
    }

    /// `path` in its extended-length form; the path as given when GetFullPathNameW cannot make it absolute (the call
    /// that uses it then fails with its own error).
    static func extended(_ path: String) -> String {
        if path.hasPrefix(#"\\?\"#) || path.hasPrefix(#"\\.\"#) { return path }
        guard let full = fullPath(String(path.map { $0 == "/" ? #"\"# : $0 })) else { return path }
        if full.hasPrefix(#"\\?\"#) || full.hasPrefix(#"\\.\"#) { return full }
        if full.hasPrefix(#"\\"#) { return #"\\?\UNC\"# + full.dropFirst(2) }
        return #"\\?\"# + full
    }

    /// GetFullPathNameW: asked once for the size (which counts the terminating NUL), then for the path (whose length
    /// does not); nil when it fails.
    private static func fullPath(_ path: String) -> String? {
        path.withCString(encodedAs: UTF16.self) { name -> String? in
            let needed = GetFullPathNameW(name, 0, nil, nil)
            guard needed > 0 else { return nil }
            var buffer = [WCHAR](repeating: 0, count: Int(needed))
            let length = GetFullPathNameW(name, needed, &buffer, nil)
            guard length > 0, length < needed else { return nil }
            return String(decoding: buffer[..<Int(length)], as: UTF16.self)
        }
    }
}
#endif
