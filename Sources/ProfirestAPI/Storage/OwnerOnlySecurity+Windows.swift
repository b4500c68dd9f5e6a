// Windows only: the counterpart of mode 0600. On Linux the test-only target PlatformShims compiles this same file
// (PROFIREST_SHIMS) against declaration shims of WinSDK (Sources/WindowsShims); see Tests/PlatformShimsTests.
#if os(Windows) || PROFIREST_SHIMS
// sddl.h (ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1) is part of
// Swift's WinSDK module only from Swift 6.0 (swiftlang/swift#71565, "Windows: include SDDL conversion headers",
// February 2024, after 5.10 branched); with an older compiler those names would not be found. Say so instead.
#if os(Windows) && !compiler(>=6.0)
#error("ProfirestAPI needs Swift 6.0 or later on Windows (its WinSDK module has sddl.h only from 6.0)")
#endif
#if PROFIREST_SHIMS
import WindowsShims
#else
import WinSDK
#endif

/// The security descriptor a new token, journal or lock file is created with: a protected DACL (nothing inherited
/// from the folder) holding one entry, full access for the user this process runs as. No other account — not
/// Users, not Everyone, not another user of a shared folder such as ProgramData — can open the file. An existing
/// token or journal file of this user is given the same DACL when it is read (`tighten`).
///
/// Written as SDDL, `D:P(A;;FA;;;<user SID>)`, and converted by the system: one documented call instead of building
/// the ACL by hand, and the whole policy readable on one line. The user's SID is taken from the process token rather
/// than the `OW` (owner rights) alias, because an elevated administrator's new files are owned by the Administrators
/// group, which `OW` would then let in.
enum OwnerOnlySecurity {
    /// Runs `body` with SECURITY_ATTRIBUTES for CreateFileW, freeing what the system allocated when `body` returns.
    /// Throws `StorageError(kind: failure)` when the descriptor cannot be made; the caller then creates nothing, so a
    /// file is never written with the folder's inherited permissions instead.
    static func withAttributes<T>(
        path: String, failure: StorageError.Kind, _ body: (inout SECURITY_ATTRIBUTES) throws -> T
    ) throws -> T {
        try withCurrentUser(path: path, failure: failure) { user in
            try withDescriptor(for: user, path: path, failure: failure) { descriptor in
                var attributes = SECURITY_ATTRIBUTES(
                    nLength: DWORD(MemoryLayout<SECURITY_ATTRIBUTES>.size), lpSecurityDescriptor: descriptor,
                    bInheritHandle: false)
                return try body(&attributes)
            }
        }
    }

    /// Best effort, like `fchmod(fd, 0600)` on POSIX: gives the existing file at `path` this protected owner-only DACL,
    /// replacing whatever it had — entries inherited from its folder, or whatever the program that wrote, copied or
    /// restored it left. A failure is ignored: it must not stop the caller from reading a file it is allowed to read.
    /// Nothing allocated is kept.
    ///
    /// Only a file owned by this process's user is changed. fchmod never takes access away from the file's owner, but
    /// a new DACL naming only us would: an administrator (or anyone granted WRITE_DAC) running a tool on a service's
    /// token file would lock the service out of it. So a file of another owner, or one whose owner cannot be read, is
    /// read as it is. (That includes a file an elevated administrator's process created, which the Administrators
    /// group owns: left wider rather than risk locking someone out.)
    ///
    /// SetNamedSecurityInfoW rather than SetFileSecurityW: the latter's documentation calls it obsolete and points to
    /// the former, whose SecurityInfo takes PROTECTED_DACL_SECURITY_INFORMATION (the DACL is protected from the
    /// folder's inheritable entries, the `P` of the SDDL) and which returns its error instead of setting
    /// GetLastError. It takes the DACL itself, which GetSecurityDescriptorDacl finds inside the converted descriptor
    /// (a pointer into it, freed with it).
    ///
    /// Applied on every call rather than only when the DACL differs: comparing would mean reading the file's
    /// descriptor and walking its entries, while setting the same DACL again changes nothing. The library reads these
    /// files rarely (it keeps the state in memory), mostly under the storage lock; two processes setting the same DACL
    /// at once, or one setting it while another renames a new owner-only file into place, leave the file owner-only.
    static func tighten(path: String) {
        _ = try? withCurrentUser(path: path, failure: .unreadable) { user in
            guard isOwned(path, by: user) else { return }
            try withDescriptor(for: user, path: path, failure: .unreadable) { descriptor in
                var present: WindowsBool = false
                var defaulted: WindowsBool = false
                var dacl: PACL? = nil
                guard GetSecurityDescriptorDacl(descriptor, &present, &dacl, &defaulted), present.boolValue, let dacl
                else { return }
                // DACL_SECURITY_INFORMATION (0x00000004L) comes in as Int32, PROTECTED_DACL_SECURITY_INFORMATION
                // (0x80000000L) as DWORD.
                let information = DWORD(DACL_SECURITY_INFORMATION) | PROTECTED_DACL_SECURITY_INFORMATION
                var name = Array(LongPath.extended(path).utf16) + [0]
                _ = name.withUnsafeMutableBufferPointer {
                    SetNamedSecurityInfoW($0.baseAddress, SE_FILE_OBJECT, information, nil, nil, dacl, nil)
                }
            }
        }
    }

    /// Whether the file at `path` is owned by `user`; false when its owner cannot be read (GetNamedSecurityInfoW
    /// needs READ_CONTROL on the file, or its ownership).
    private static func isOwned(_ path: String, by user: PSID?) -> Bool {
        var owner: PSID? = nil
        var descriptor: PSECURITY_DESCRIPTOR? = nil
        let status = LongPath.with(path) {
            GetNamedSecurityInfoW(
                $0, SE_FILE_OBJECT, DWORD(OWNER_SECURITY_INFORMATION), &owner, nil, nil, nil, &descriptor)
        }
        // `owner` points into the descriptor, which is freed only after the comparison.
        defer { if let descriptor { _ = LocalFree(descriptor) } }
        guard status == DWORD(ERROR_SUCCESS), let owner else { return false }
        return EqualSid(owner, user)
    }

    /// Runs `body` with the owner-only descriptor for `user`, freeing what the system allocated when `body` returns.
    private static func withDescriptor<T>(
        for user: PSID?, path: String, failure: StorageError.Kind, _ body: (PSECURITY_DESCRIPTOR) throws -> T
    ) throws -> T {
        var text: LPWSTR? = nil
        guard ConvertSidToStringSidW(user, &text), let text else {
            throw refused(path, failure, "ConvertSidToStringSidW", GetLastError())
        }
        let sid = String(decodingCString: text, as: UTF16.self)
        _ = LocalFree(text)
        let sddl = "D:P(A;;FA;;;\(sid))"
        var descriptor: PSECURITY_DESCRIPTOR? = nil
        let converted = sddl.withCString(encodedAs: UTF16.self) {
            ConvertStringSecurityDescriptorToSecurityDescriptorW($0, DWORD(SDDL_REVISION_1), &descriptor, nil)
        }
        guard converted, let descriptor else {
            throw refused(path, failure, "ConvertStringSecurityDescriptorToSecurityDescriptorW", GetLastError())
        }
        defer { _ = LocalFree(descriptor) }
        return try body(descriptor)
    }

    /// Runs `body` with the process user's SID, which lives in memory freed when `body` returns.
    private static func withCurrentUser<T>(
        path: String, failure: StorageError.Kind, _ body: (PSID?) throws -> T
    ) throws -> T {
        var opened: HANDLE? = nil
        guard OpenProcessToken(GetCurrentProcess(), DWORD(TOKEN_QUERY), &opened), let token = opened else {
            throw refused(path, failure, "OpenProcessToken", GetLastError())
        }
        defer { _ = CloseHandle(token) }
        // The first call only asks for the size.
        var length: DWORD = 0
        _ = GetTokenInformation(token, TokenUser, nil, 0, &length)
        guard length > 0 else { throw refused(path, failure, "GetTokenInformation", GetLastError()) }
        let buffer = UnsafeMutableRawPointer.allocate(
            byteCount: Int(length), alignment: MemoryLayout<TOKEN_USER>.alignment)
        defer { buffer.deallocate() }
        guard GetTokenInformation(token, TokenUser, buffer, length, &length) else {
            throw refused(path, failure, "GetTokenInformation", GetLastError())
        }
        // The SID lies in the same buffer, after the TOKEN_USER that points to it.
        return try body(buffer.bindMemory(to: TOKEN_USER.self, capacity: 1).pointee.User.Sid)
    }

    private static func refused(
        _ path: String, _ kind: StorageError.Kind, _ call: String, _ code: DWORD
    ) -> StorageError {
        StorageError(
            kind: kind, path: path,
            reason: "cannot make the file readable by this Windows user only (\(call) failed, Windows error \(code)); "
                + "nothing was written")
    }
}
#endif
