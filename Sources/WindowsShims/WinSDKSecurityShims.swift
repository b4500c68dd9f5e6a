// Test-only declaration shims of the WinSDK security API that
// Sources/ProfirestAPI/Storage/OwnerOnlySecurity+Windows.swift uses: the process token and its user SID, SID and
// security-descriptor strings, and LocalFree for what those return.
// See WinSDKShims.swift for how declarations are cited and what is not confirmed.
//
// Behaviour:
// - GetCurrentProcess returns the documented pseudo-handle, (HANDLE)-1. OpenProcessToken on it opens an access-token
//   handle (in the handle table, so CloseHandle must close it) whose user is `WindowsShimUser.sid`.
// - GetTokenInformation answers TokenUser only, and only for a token opened with TOKEN_QUERY: with no buffer or too
//   small a buffer it fails with ERROR_INSUFFICIENT_BUFFER and sets the size needed; otherwise it writes a TOKEN_USER
//   whose Sid points to the binary SID (revision, sub-authority count, authority, sub-authorities) behind it in the
//   same buffer, as the system does.
// - ConvertSidToStringSidW reads that binary SID and returns its S-R-I-S… text in memory it allocates;
//   ConvertStringSecurityDescriptorToSecurityDescriptorW parses the SDDL (owner, group, DACL flags and ACE strings;
//   ERROR_UNKNOWN_REVISION for a revision other than SDDL_REVISION_1, ERROR_INVALID_PARAMETER for a malformed string)
//   into a `SecurityDescriptorModel` kept with the memory it returns. Both allocations are LocalFree's to release:
//   each is counted on the thread that made it (`WindowsShimThread`), and LocalFree of anything else is counted as
//   invalid.
import Foundation

/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef PVOID PSID;` (winnt.h)
public typealias PSID = UnsafeMutableRawPointer
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef PVOID PSECURITY_DESCRIPTOR;`
/// (winnt.h; the page lists it among the data types)
public typealias PSECURITY_DESCRIPTOR = UnsafeMutableRawPointer
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef HANDLE HLOCAL;`
public typealias HLOCAL = HANDLE

/// https://learn.microsoft.com/en-us/windows/win32/api/winnt/ns-winnt-sid_and_attributes —
/// `typedef struct _SID_AND_ATTRIBUTES { PSID Sid; DWORD Attributes; } SID_AND_ATTRIBUTES, *PSID_AND_ATTRIBUTES;`
public struct SID_AND_ATTRIBUTES {
    public var Sid: PSID?
    public var Attributes: DWORD
    public init() { self.init(Sid: nil, Attributes: 0) }
    public init(Sid: PSID?, Attributes: DWORD) {
        self.Sid = Sid
        self.Attributes = Attributes
    }
}

/// https://learn.microsoft.com/en-us/windows/win32/api/winnt/ns-winnt-token_user —
/// `typedef struct _TOKEN_USER { SID_AND_ATTRIBUTES User; } TOKEN_USER, *PTOKEN_USER;`
public struct TOKEN_USER {
    public var User: SID_AND_ATTRIBUTES
    public init() { self.init(User: SID_AND_ATTRIBUTES()) }
    public init(User: SID_AND_ATTRIBUTES) { self.User = User }
}

/// https://learn.microsoft.com/en-us/windows/win32/api/winnt/ne-winnt-token_information_class —
/// `typedef enum _TOKEN_INFORMATION_CLASS { TokenUser = 1, … } TOKEN_INFORMATION_CLASS;` Swift imports a plain C
/// enum as a RawRepresentable struct with one global constant per case; the library only ever passes `TokenUser`, so
/// whether the type is spelled `TOKEN_INFORMATION_CLASS` or `_TOKEN_INFORMATION_CLASS` there is not relied on (not
/// confirmed).
public struct TOKEN_INFORMATION_CLASS: RawRepresentable, Equatable {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
}
public var TokenUser: TOKEN_INFORMATION_CLASS { TOKEN_INFORMATION_CLASS(rawValue: 1) }

/// https://learn.microsoft.com/en-us/windows/win32/secauthz/access-rights-for-access-token-objects — TOKEN_QUERY,
/// "required to query an access token"; its value, 0x0008, is winnt.h's (`#define TOKEN_QUERY (0x0008)`), not shown
/// on that page.
public var TOKEN_QUERY: Int { 0x0008 }
/// https://learn.microsoft.com/en-us/windows/win32/api/sddl/nf-sddl-convertstringsecuritydescriptortosecuritydescriptorw
/// — "Currently this value must be SDDL_REVISION_1"; its value, 1, is sddl.h's (`#define SDDL_REVISION_1 1`), not
/// shown on that page.
public var SDDL_REVISION_1: Int { 1 }

/// https://learn.microsoft.com/en-us/windows/win32/api/processthreadsapi/nf-processthreadsapi-getcurrentprocess —
/// `HANDLE GetCurrentProcess();` — "a special constant, currently (HANDLE)-1"; it needs no CloseHandle.
public func GetCurrentProcess() -> HANDLE! {
    HANDLE(bitPattern: -1)
}

/// https://learn.microsoft.com/en-us/windows/win32/api/processthreadsapi/nf-processthreadsapi-openprocesstoken —
/// `BOOL OpenProcessToken(HANDLE ProcessHandle, DWORD DesiredAccess, PHANDLE TokenHandle);` The token handle is
/// closed with CloseHandle. Only the current process's pseudo-handle is modelled.
public func OpenProcessToken(_ ProcessHandle: HANDLE!, _ DesiredAccess: DWORD, _ TokenHandle: PHANDLE!) -> Bool {
    if let code = WindowsShimThread.enter("OpenProcessToken") { return fail(code, false) }
    guard ProcessHandle == HANDLE(bitPattern: -1), let TokenHandle else { return fail(ERROR_INVALID_HANDLE, false) }
    guard DesiredAccess & DWORD(TOKEN_QUERY) != 0 else {
        // A token opened without TOKEN_QUERY cannot be queried: model it as unusable rather than track its rights.
        return fail(ERROR_ACCESS_DENIED, false)
    }
    TokenHandle.pointee = WindowsFiles.shared.openToken()
    return true
}

/// https://learn.microsoft.com/en-us/windows/win32/api/securitybaseapi/nf-securitybaseapi-gettokeninformation —
/// `BOOL GetTokenInformation(HANDLE TokenHandle, TOKEN_INFORMATION_CLASS TokenInformationClass,
/// LPVOID TokenInformation, DWORD TokenInformationLength, PDWORD ReturnLength);` Only TokenUser is modelled.
public func GetTokenInformation(
    _ TokenHandle: HANDLE!, _ TokenInformationClass: TOKEN_INFORMATION_CLASS, _ TokenInformation: LPVOID!,
    _ TokenInformationLength: DWORD, _ ReturnLength: PDWORD!
) -> Bool {
    precondition(TokenInformationClass == TokenUser, "the WinSDK shim models TokenUser only")
    if let code = WindowsShimThread.enter("GetTokenInformation") { return fail(code, false) }
    guard WindowsFiles.shared.isToken(TokenHandle) else { return fail(ERROR_INVALID_HANDLE, false) }
    guard let ReturnLength else { return fail(ERROR_INVALID_PARAMETER, false) }
    // "If TokenInformation is NULL, this parameter must be zero."
    if TokenInformation == nil && TokenInformationLength != 0 { return fail(ERROR_INVALID_PARAMETER, false) }
    let sid = WindowsShimUser.binarySID
    let needed = MemoryLayout<TOKEN_USER>.stride + sid.count
    ReturnLength.pointee = DWORD(needed)
    guard let buffer = TokenInformation, Int(TokenInformationLength) >= needed else {
        return fail(ERROR_INSUFFICIENT_BUFFER, false)
    }
    let sidAddress = buffer + MemoryLayout<TOKEN_USER>.stride
    sid.withUnsafeBytes { sidAddress.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    buffer.storeBytes(of: TOKEN_USER(User: SID_AND_ATTRIBUTES(Sid: sidAddress, Attributes: 0)), as: TOKEN_USER.self)
    return true
}

/// https://learn.microsoft.com/en-us/windows/win32/api/sddl/nf-sddl-convertsidtostringsidw —
/// `BOOL ConvertSidToStringSidW(PSID Sid, LPWSTR *StringSid);` "To free the returned buffer, call the LocalFree
/// function."
public func ConvertSidToStringSidW(_ Sid: PSID!, _ StringSid: UnsafeMutablePointer<LPWSTR?>!) -> Bool {
    if let code = WindowsShimThread.enter("ConvertSidToStringSidW") { return fail(code, false) }
    guard let Sid, let StringSid else { return fail(ERROR_INVALID_PARAMETER, false) }
    guard let text = WindowsShimUser.text(ofBinarySID: Sid) else { return fail(ERROR_INVALID_SID, false) }
    let units = Array(text.utf16) + [0]
    let memory = LocalMemory.shared.allocate(byteCount: units.count * 2, descriptor: nil)
    let characters = memory.bindMemory(to: WCHAR.self, capacity: units.count)
    characters.initialize(from: units, count: units.count)
    StringSid.pointee = characters
    return true
}

/// https://learn.microsoft.com/en-us/windows/win32/api/sddl/nf-sddl-convertstringsecuritydescriptortosecuritydescriptorw
/// — `BOOL ConvertStringSecurityDescriptorToSecurityDescriptorW(LPCWSTR StringSecurityDescriptor,
/// DWORD StringSDRevision, PSECURITY_DESCRIPTOR *SecurityDescriptor, PULONG SecurityDescriptorSize);` "To free the
/// returned buffer, call the LocalFree function." SecurityDescriptorSize may be NULL.
public func ConvertStringSecurityDescriptorToSecurityDescriptorW(
    _ StringSecurityDescriptor: LPCWSTR!, _ StringSDRevision: DWORD,
    _ SecurityDescriptor: UnsafeMutablePointer<PSECURITY_DESCRIPTOR?>!, _ SecurityDescriptorSize: PULONG!
) -> Bool {
    if let code = WindowsShimThread.enter("ConvertStringSecurityDescriptorToSecurityDescriptorW") {
        return fail(code, false)
    }
    guard StringSDRevision == DWORD(SDDL_REVISION_1) else { return fail(ERROR_UNKNOWN_REVISION, false) }
    guard let StringSecurityDescriptor, let SecurityDescriptor else { return fail(ERROR_INVALID_PARAMETER, false) }
    guard let parsed = SecurityDescriptorModel.parse(sddl: string(StringSecurityDescriptor)) else {
        return fail(ERROR_INVALID_PARAMETER, false)
    }
    // A self-relative descriptor's size: a 20-byte header, then the ACL (an 8-byte header, each ACE a 4-byte header
    // and 4-byte mask before its SID), at most 68 bytes of SID per ACE. The bytes are not a real descriptor: the shim
    // keeps the parsed form with them, and only CreateFileW reads it.
    let size = 20 + 8 + (parsed.dacl?.count ?? 0) * (8 + 68)
    SecurityDescriptor.pointee = LocalMemory.shared.allocate(byteCount: size, descriptor: parsed)
    SecurityDescriptorSize?.pointee = ULONG(size)
    return true
}

/// https://learn.microsoft.com/en-us/windows/win32/api/winbase/nf-winbase-localfree —
/// `HLOCAL LocalFree(HLOCAL hMem);` "If the function succeeds, the return value is NULL"; otherwise it is hMem.
/// "If the hMem parameter is NULL, LocalFree ignores the parameter and returns NULL."
@discardableResult
public func LocalFree(_ hMem: HLOCAL!) -> HLOCAL! {
    _ = WindowsShimThread.enter("LocalFree")
    guard let hMem else { return nil }
    guard LocalMemory.shared.free(hMem) else {
        WindowsShimThread.current.invalidFrees += 1
        return fail(ERROR_INVALID_HANDLE, hMem)
    }
    return nil
}

/// The user the shims' process token belongs to. Usage: `XCTAssertEqual(ace.sid, WindowsShimUser.sid)`
public enum WindowsShimUser {
    /// A domain-style user SID made up for the tests (S-1-5-21-…-1001).
    public static let sid = "S-1-5-21-2087456514-3914782260-1390573141-1001"

    /// The SID in its binary form: revision, sub-authority count, 6-byte big-endian identifier authority, then each
    /// sub-authority as a little-endian 32-bit number
    /// (https://learn.microsoft.com/en-us/windows/win32/secauthz/sid-components).
    static var binarySID: [UInt8] {
        let parts = sid.split(separator: "-").dropFirst(2).compactMap { UInt64($0) }
        let authority = parts[0]
        let subAuthorities = parts.dropFirst().map { UInt32($0) }
        var bytes: [UInt8] = [1, UInt8(subAuthorities.count)]
        bytes += (0..<6).map { UInt8(truncatingIfNeeded: authority >> (8 * (5 - $0))) }
        for value in subAuthorities { bytes += withUnsafeBytes(of: value.littleEndian, Array.init) }
        return bytes
    }

    /// The text of a binary SID at `pointer`, or nil when it is not a valid revision-1 SID.
    static func text(ofBinarySID pointer: UnsafeRawPointer) -> String? {
        let bytes = pointer.assumingMemoryBound(to: UInt8.self)
        let count = Int(bytes[1])
        // SID_MAX_SUB_AUTHORITIES is 15.
        guard bytes[0] == 1, count <= 15 else { return nil }
        let authority = (2..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[$1]) }
        let subAuthorities = (0..<count).map {
            UInt32(littleEndian: pointer.loadUnaligned(fromByteOffset: 8 + 4 * $0, as: UInt32.self))
        }
        return (["S", "1", String(authority)] + subAuthorities.map(String.init)).joined(separator: "-")
    }
}

/// A security descriptor as its SDDL string states it
/// (https://learn.microsoft.com/en-us/windows/win32/secauthz/security-descriptor-string-format).
/// Usage: `descriptor.daclFlags.contains("P")`
public struct SecurityDescriptorModel: Equatable, Sendable {
    /// `O:` — the owner's SID string, nil when not given (the creator's default owner then applies).
    public var owner: String?
    /// `G:` — the primary group's SID string.
    public var group: String?
    /// The `D:` flags: "P" (SE_DACL_PROTECTED: nothing inherited), "AI", "AR", "NO_ACCESS_CONTROL".
    public var daclFlags: [String]
    /// The DACL's entries in order; nil when the string has no `D:` part.
    public var dacl: [AccessControlEntry]?
    /// Whether the DACL is protected from inheritable ACEs of the parent (SDDL flag "P").
    public var daclIsProtected: Bool { daclFlags.contains("P") }

    /// Usage: `SecurityDescriptorModel(owner: nil, group: nil, daclFlags: ["P"], dacl: [ace])`
    public init(owner: String?, group: String?, daclFlags: [String], dacl: [AccessControlEntry]?) {
        self.owner = owner
        self.group = group
        self.daclFlags = daclFlags
        self.dacl = dacl
    }

    /// Parses an SDDL string; nil when it is malformed.
    static func parse(sddl: String) -> SecurityDescriptorModel? {
        var result = SecurityDescriptorModel(owner: nil, group: nil, daclFlags: [], dacl: nil)
        var rest = Substring(sddl)
        while !rest.isEmpty {
            guard rest.count >= 2, rest.dropFirst().first == ":", let tag = rest.first else { return nil }
            rest = rest.dropFirst(2)
            // A component runs to the next "X:" tag outside parentheses.
            var depth = 0
            var end = rest.startIndex
            while end < rest.endIndex {
                let c = rest[end]
                if c == "(" { depth += 1 } else if c == ")" { depth -= 1 }
                let next = rest.index(after: end)
                if depth == 0, "OGDS".contains(c), next < rest.endIndex, rest[next] == ":" { break }
                end = next
            }
            let body = rest[rest.startIndex..<end]
            rest = rest[end...]
            switch tag {
            case "O": guard isSID(body) else { return nil }; result.owner = String(body)
            case "G": guard isSID(body) else { return nil }; result.group = String(body)
            case "D":
                guard let (flags, aces) = acl(body) else { return nil }
                result.daclFlags = flags
                result.dacl = aces
            case "S": guard acl(body) != nil else { return nil }
            default: return nil
            }
        }
        return result
    }

    private static func acl(_ text: Substring) -> ([String], [AccessControlEntry])? {
        let flagsEnd = text.firstIndex(of: "(") ?? text.endIndex
        var flagText = text[..<flagsEnd]
        var flags: [String] = []
        while !flagText.isEmpty {
            guard let flag = ["NO_ACCESS_CONTROL", "AI", "AR", "P"].first(where: { flagText.hasPrefix($0) }) else {
                return nil
            }
            flags.append(flag)
            flagText = flagText.dropFirst(flag.count)
        }
        var aces: [AccessControlEntry] = []
        var rest = text[flagsEnd...]
        while !rest.isEmpty {
            guard rest.first == "(", let close = rest.firstIndex(of: ")") else { return nil }
            let fields = rest[rest.index(after: rest.startIndex)..<close]
                .split(separator: ";", omittingEmptySubsequences: false)
            guard fields.count == 6, !fields[0].isEmpty, !fields[2].isEmpty, isSID(fields[5]) else { return nil }
            aces.append(
                AccessControlEntry(
                    type: String(fields[0]), flags: String(fields[1]), rights: String(fields[2]),
                    sid: String(fields[5])))
            rest = rest[rest.index(after: close)...]
        }
        return (flags, aces)
    }

    /// A SID string: `S-1-…` or one of the two-letter aliases of
    /// https://learn.microsoft.com/en-us/windows/win32/secauthz/sid-strings (the common ones).
    private static func isSID(_ text: Substring) -> Bool {
        let aliases: Set<Substring> = [
            "AN", "AU", "BA", "BG", "BU", "CG", "CO", "IU", "LS", "NS", "NU", "OW", "PU", "SY", "WD",
        ]
        if aliases.contains(text) { return true }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        return parts.count >= 3 && parts[0] == "S" && parts[1] == "1"
            && parts.dropFirst().allSatisfy { UInt64($0) != nil }
    }
}

/// One ACE string, `ace_type;ace_flags;rights;object_guid;inherit_object_guid;account_sid`
/// (https://learn.microsoft.com/en-us/windows/win32/secauthz/ace-strings); the GUIDs are not kept.
/// Usage: `ace.type == "A" && ace.rights == "FA"`
public struct AccessControlEntry: Equatable, Sendable {
    /// "A" allow, "D" deny, …
    public var type: String
    /// Inheritance and audit flags ("OI", "CI", "ID", …), empty for none.
    public var flags: String
    /// The rights: "FA" (FILE_ALL_ACCESS), "FR", "GA", … or a hexadecimal mask.
    public var rights: String
    /// The trustee: a SID string (`S-1-…`) or an alias ("WD" Everyone, "BU" Users, "OW" owner rights, …).
    public var sid: String

    /// Usage: `AccessControlEntry(type: "A", flags: "", rights: "FA", sid: WindowsShimUser.sid)`
    public init(type: String, flags: String, rights: String, sid: String) {
        self.type = type
        self.flags = flags
        self.rights = rights
        self.sid = sid
    }
}

/// The memory that ConvertSidToStringSidW and ConvertStringSecurityDescriptorToSecurityDescriptorW hand out and
/// LocalFree takes back.
final class LocalMemory: @unchecked Sendable {
    static let shared = LocalMemory()

    private let lock = NSLock()
    private var live: [Int: SecurityDescriptorModel?] = [:]

    func allocate(byteCount: Int, descriptor: SecurityDescriptorModel?) -> UnsafeMutableRawPointer {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: max(byteCount, 1), alignment: 8)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: max(byteCount, 1))
        lock.withLock { live[Int(bitPattern: memory)] = .some(descriptor) }
        WindowsShimThread.current.allocations += 1
        return memory
    }

    /// The descriptor kept with live memory at `pointer`; nil when the memory is not live or holds no descriptor.
    func descriptor(at pointer: UnsafeMutableRawPointer) -> SecurityDescriptorModel? {
        lock.withLock { live[Int(bitPattern: pointer)] ?? nil }
    }

    /// Frees live memory; false when `pointer` is not live (never allocated here, or already freed).
    func free(_ pointer: UnsafeMutableRawPointer) -> Bool {
        let known = lock.withLock { live.removeValue(forKey: Int(bitPattern: pointer)) != nil }
        guard known else { return false }
        pointer.deallocate()
        WindowsShimThread.current.frees += 1
        return true
    }
}
