// Apple platforms only. On Linux the test-only target PlatformShims compiles this same file (PROFIREST_SHIMS): fcntl is
// then Glibc's, the overlay function Darwin has too (`fcntl(_ fd: Int32, _ cmd: Int32) -> Int32`, swiftlang/swift
// stdlib/public/Platform/Platform.swift), F_FULLFSYNC comes from Sources/AppleShims, and URLResourceValues is
// Foundation's, which has isExcludedFromBackup on every platform.
#if canImport(Darwin) || PROFIREST_SHIMS
import Foundation
#if PROFIREST_SHIMS
import AppleShims
#endif

/// What only Apple platforms do to the token file and the outbox journal (see `FileExtraOperations`).
enum FileExtras: FileExtraOperations {
    /// On Apple platforms plain fsync stops at the drive's cache; F_FULLFSYNC reaches the medium (fcntl(2)).
    static func fullSync(_ fd: Int32) -> Bool {
        fcntl(fd, F_FULLFSYNC) == 0
    }

    /// The attribute lives on the file, and every replacement is a new file: set it each time. Best effort.
    static func excludeFromBackup(path: String) {
        var url = URL(fileURLWithPath: path)
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        try? url.setResourceValues(values)
    }
}
#endif
