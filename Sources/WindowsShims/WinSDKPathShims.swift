// Test-only declaration shims of the WinSDK path and wait API the library's Windows files use (LongPath+Windows.swift,
// TokenFile+Windows.swift): GetFullPathNameW and Sleep; and how every shim reads the paths it is given.
// See WinSDKShims.swift for how declarations are typed and cited.
//
// Paths: the machine's file system stands in for drive C: — `C:\tmp\x` and `\\?\C:\tmp\x` are `/tmp/x` here — and
// the shims hold each path a call receives to Win32's rules
// (https://learn.microsoft.com/en-us/windows/win32/fileio/naming-a-file,
// https://learn.microsoft.com/en-us/windows/win32/fileio/maximum-file-path-limitation):
// - A path without the `\\?\` prefix is normalised as Win32 does: `/` is a separator, `.` and `..` are resolved, a
//   path starting with `\` is on the current drive (C:), a relative one is under the current directory. Its full form
//   must fit in MAX_PATH (260 characters, the terminating NUL included): a longer one fails with
//   ERROR_PATH_NOT_FOUND, as CreateFileW is widely reported to do (the page names no code; the library depends on
//   none). An app that opted in to long paths (manifest and LongPathsEnabled) is not modelled.
// - A `\\?\` path is passed on as it is, up to about 32,767 characters: `/` is then an ordinary character, which no
//   NTFS name may hold, and `.` and `..` are names, not steps — the shims refuse both with ERROR_INVALID_NAME, so a
//   prefix put on a path that was not normalised first is caught.
// - Only drive C: is modelled; another drive, a UNC path (`\\server\share`, `\\?\UNC\…`) and device paths (`\\.\`)
//   fail with ERROR_PATH_NOT_FOUND.
// The library's tests use this machine's absolute paths (`/tmp/…`), which Win32 reads as `C:\tmp\…`.
import Foundation

/// https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-getfullpathnamew —
/// `DWORD GetFullPathNameW(LPCWSTR lpFileName, DWORD nBufferLength, LPWSTR lpBuffer, LPWSTR *lpFilePart);`
/// "If the function succeeds, the return value is the length, in TCHARs, of the string copied to lpBuffer, not
/// including the terminating null character. If the lpBuffer buffer is too small to contain the path, the return value
/// is the size, in TCHARs, of the buffer that is required to hold the path and the terminating null character. If the
/// function fails for any other reason, the return value is zero." It works on the text only (no file need exist);
/// lpFilePart is not modelled (must be nil).
public func GetFullPathNameW(
    _ lpFileName: LPCWSTR!, _ nBufferLength: DWORD, _ lpBuffer: LPWSTR!, _ lpFilePart: UnsafeMutablePointer<LPWSTR?>!
) -> DWORD {
    precondition(lpFilePart == nil, "the WinSDK shim does not model lpFilePart")
    if let code = WindowsShimThread.enter("GetFullPathNameW") { return fail(code, 0) }
    guard let lpFileName, let full = Win32Path.full(string(lpFileName)) else { return fail(ERROR_INVALID_NAME, 0) }
    let units = Array(full.utf16)
    guard let lpBuffer, Int(nBufferLength) > units.count else { return DWORD(units.count + 1) }
    lpBuffer.initialize(from: units + [0], count: units.count + 1)
    return DWORD(units.count)
}

/// https://learn.microsoft.com/en-us/windows/win32/api/synchapi/nf-synchapi-sleep — `void Sleep(DWORD dwMilliseconds);`
/// Recorded per thread and not slept, so a test of a retry loop takes no time: `WindowsShimThread.sleeps` has them,
/// and `WindowsShimThread.onSleep` runs at each one (another process letting go of a file, say).
public func Sleep(_ dwMilliseconds: DWORD) {
    _ = WindowsShimThread.enter("Sleep")
    let state = WindowsShimThread.current
    state.sleeps.append(dwMilliseconds)
    state.onSleep?(state.sleeps.count)
}

/// How the shims read Win32 paths (see the top of this file).
enum Win32Path {
    /// The current drive, and the only one modelled.
    static let drive = "C:"

    /// GetFullPathNameW's answer for `path`: `C:\…` with `.` and `..` resolved; nil when it is not modelled.
    static func full(_ path: String) -> String? {
        let text = path.replacingOccurrences(of: "/", with: #"\"#)
        if text.hasPrefix(#"\\?\"#) || text.hasPrefix(#"\\.\"#) { return text }  // passed through as they are
        if text.hasPrefix(#"\\"#) { return nil }  // UNC: not modelled
        var rest: Substring
        if text.count >= 2, text.dropFirst().first == ":" {
            guard text.prefix(2).uppercased() == drive else { return nil }
            rest = text.dropFirst(2)
            if !rest.hasPrefix(#"\"#) { rest = Substring(currentDirectory + #"\"# + rest) }  // drive-relative
        } else if text.hasPrefix(#"\"#) {
            rest = Substring(text)
        } else {
            rest = Substring(currentDirectory + #"\"# + text)
        }
        var parts: [Substring] = []
        for part in rest.split(separator: #"\"#, omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return drive + #"\"# + parts.joined(separator: #"\"#)
    }

    /// The current directory as Win32 would write it without its drive: `\work\x` for `/work/x`.
    private static var currentDirectory: String {
        FileManager.default.currentDirectoryPath.replacingOccurrences(of: "/", with: #"\"#)
    }

    /// The path on this machine that a Win32 call given `path` works on; nil after setting the error Windows would
    /// give (see the top of this file).
    static func native(_ path: String) -> String? {
        let absolute: String
        if path.hasPrefix(#"\\?\"#) {
            let rest = path.dropFirst(4)
            guard !rest.contains("/"),
                !rest.split(separator: #"\"#, omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." })
            else { return fail(ERROR_INVALID_NAME, nil) }
            guard rest.utf16.count < 32_767 else { return fail(ERROR_FILENAME_EXCED_RANGE, nil) }
            absolute = String(rest)
        } else {
            guard let resolved = full(path) else { return fail(ERROR_PATH_NOT_FOUND, nil) }
            guard resolved.utf16.count < Int(MAX_PATH) else { return fail(ERROR_PATH_NOT_FOUND, nil) }
            absolute = resolved
        }
        guard absolute.count >= 3, absolute.prefix(3).uppercased() == drive + #"\"# else {
            return fail(ERROR_PATH_NOT_FOUND, nil)
        }
        return "/" + absolute.dropFirst(3).replacingOccurrences(of: #"\"#, with: "/")
    }
}
