// Test-only declaration shims of the WinSDK security API that
// Sources/ProfirestAPI/Storage/OwnerOnlySecurity+Windows.swift uses: the process token and its user SID, SID and
// security-descriptor strings, a descriptor's DACL and setting it on an existing file, reading an existing file's owner
// and comparing SIDs, and LocalFree for what those return.
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
// - GetSecurityDescriptorDacl answers for live memory from ConvertStringSecurityDescriptorToSecurityDescriptorW only:
//   the ACL pointer it gives points into that memory (20 bytes in, where a self-relative descriptor's DACL starts),
//   so it is freed with the descriptor and needs no LocalFree of its own. Memory that is not live (freed too early)
//   fails with ERROR_INVALID_SECURITY_DESCR and is counted.
// - SetNamedSecurityInfoW models SE_FILE_OBJECT with DACL_SECURITY_INFORMATION, with or without
//   PROTECTED_DACL_SECURITY_INFORMATION, on an existing file or folder: it replaces the security recorded for the path
//   with that ACL's entries, protected ("P") only when PROTECTED_DACL_SECURITY_INFORMATION is given. Without it a real
//   system would also merge in the folder's inheritable entries; the shim records the DACL unprotected and adds
//   nothing. A missing path is ERROR_FILE_NOT_FOUND; an ACL pointer that is not one GetSecurityDescriptorDacl gave
//   from live memory is ERROR_INVALID_ACL and counted as an invalid descriptor use. As documented, the error is the
//   return value (ERROR_SUCCESS, 0, on success), not GetLastError's.
// - GetNamedSecurityInfoW models reading a file's or folder's owner only (SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION):
//   the owner is the one `WindowsFiles` records (see WinSDKShims.swift: the user who created the file through the
//   shims, or one a test set), returned as a binary SID inside a descriptor the call allocates, LocalFree's to
//   release like the others. A missing path is ERROR_FILE_NOT_FOUND. Access checks are not modelled (on Windows
//   reading the owner needs READ_CONTROL or ownership); tests make the call fail instead.
// - EqualSid compares two binary SIDs; a SID that is not valid (whose result the documentation leaves undefined)
//   makes it fail with ERROR_INVALID_SID.
import Foundation

/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef PVOID PSID;` (winnt.h)
public typealias PSID = UnsafeMutableRawPointer
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef PVOID PSECURITY_DESCRIPTOR;`
/// (winnt.h; the page lists it among the data types)
public typealias PSECURITY_DESCRIPTOR = UnsafeMutableRawPointer
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef HANDLE HLOCAL;`
public typealias HLOCAL = HANDLE
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef unsigned char BYTE;`
public typealias BYTE = UInt8
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef unsigned short WORD;`
public typealias WORD = UInt16
/// https://learn.microsoft.com/en-us/windows/win32/winprog/windows-data-types — `typedef BOOL far *LPBOOL;` Swift
/// imports C `BOOL` as `WindowsBool` (the WinSDK overlay), so a `BOOL *` parameter as a pointer to it. Not confirmed
/// by compiling on Windows; public Swift code that runs there passes `&present` with `var present: WindowsBool` to
/// GetSecurityDescriptorDacl (read for comparison).
public typealias LPBOOL = UnsafeMutablePointer<WindowsBool>

/// https://learn.microsoft.com/en-us/windows/win32/api/winnt/ns-winnt-acl — `typedef struct _ACL { BYTE AclRevision;
/// BYTE Sbz1; WORD AclSize; WORD AceCount; WORD Sbz2; } ACL; typedef ACL *PACL;` The header of an access control
/// list; the entries follow it in memory. The library only passes the pointer on.
public struct ACL {
    public var AclRevision: BYTE
    public var Sbz1: BYTE
    public var AclSize: WORD
    public var AceCount: WORD
    public var Sbz2: WORD
    public init() { self.init(AclRevision: 0, Sbz1: 0, AclSize: 0, AceCount: 0, Sbz2: 0) }
    public init(AclRevision: BYTE, Sbz1: BYTE, AclSize: WORD, AceCount: WORD, Sbz2: WORD) {
        self.AclRevision = AclRevision
        self.Sbz1 = Sbz1
        self.AclSize = AclSize
        self.AceCount = AceCount
        self.Sbz2 = Sbz2
    }
}
/// https://learn.microsoft.com/en-us/windows/win32/api/winnt/ns-winnt-acl — `typedef ACL *PACL;`
public typealias PACL = UnsafeMutablePointer<ACL>

/// https://learn.microsoft.com/en-us/windows/win32/api/winnt/ns-winnt-sid_and_attributes —
/// `typedef struct _SID_AND_ATTRIBUTES { PSID Sid; DWORD Attributes; } SID_AND_ATTRIBUTES, *PSID_AND_ATTRIBUTES;`
public struct SID_AND_ATTRIBUTES {
    public var Sid: PSID!
    public var Attributes: DWORD
    public init() { self.init(Sid: nil, Attributes: 0) }
    public init(Sid: PSID!, Attributes: DWORD) {
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
/// "required to query an access token". winnt.h: `#define TOKEN_QUERY (0x0008)` — `int`: Int32 (see WinSDKShims.swift
/// on how macros are typed).
public var TOKEN_QUERY: Int32 { 0x0008 }
/// https://learn.microsoft.com/en-us/windows/win32/api/sddl/nf-sddl-convertstringsecuritydescriptortosecuritydescriptorw
/// — "Currently this value must be SDDL_REVISION_1". sddl.h: `#define SDDL_REVISION_1 1` — Int32.
public var SDDL_REVISION_1: Int32 { 1 }

/// https://learn.microsoft.com/en-us/windows/win32/api/accctrl/ne-accctrl-se_object_type —
/// `typedef enum _SE_OBJECT_TYPE { SE_UNKNOWN_OBJECT_TYPE, SE_FILE_OBJECT, … } SE_OBJECT_TYPE;` SE_FILE_OBJECT is the
/// second enumerator, so 1 (C numbers enumerators from 0). Imported, like TOKEN_INFORMATION_CLASS, as a
/// RawRepresentable struct with a global constant per case; the library only ever passes `SE_FILE_OBJECT`, so the
/// struct's exact Swift name (`SE_OBJECT_TYPE` or `_SE_OBJECT_TYPE`) is not relied on (not confirmed).
public struct SE_OBJECT_TYPE: RawRepresentable, Equatable {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
}
public var SE_FILE_OBJECT: SE_OBJECT_TYPE { SE_OBJECT_TYPE(rawValue: 1) }

/// https://learn.microsoft.com/en-us/windows/win32/secauthz/security-information —
/// `typedef DWORD SECURITY_INFORMATION, *PSECURITY_INFORMATION;`
public typealias SECURITY_INFORMATION = DWORD
/// https://learn.microsoft.com/en-us/openspecs/windows_protocols/ms-dtyp/23e75ca3-98fd-4396-84e5-86cd9d40d343 (MS-DTYP
/// 2.4.7 SECURITY_INFORMATION) — DACL_SECURITY_INFORMATION, "The DACL of the object is being referenced.";
/// PROTECTED_DACL_SECURITY_INFORMATION, "The DACL cannot inherit ACEs."; OWNER_SECURITY_INFORMATION, "The owner
/// identifier of the object is being referenced."
/// winnt.h: `#define DACL_SECURITY_INFORMATION (0x00000004L)` — `long`: Int32.
public var DACL_SECURITY_INFORMATION: Int32 { 0x0000_0004 }
/// winnt.h: `#define PROTECTED_DACL_SECURITY_INFORMATION (0x80000000L)` — too big for `long`, so `unsigned long`:
/// UInt32, like GENERIC_READ.
public var PROTECTED_DACL_SECURITY_INFORMATION: UInt32 { 0x8000_0000 }
/// winnt.h: `#define OWNER_SECURITY_INFORMATION (0x00000001L)` — Int32.
public var OWNER_SECURITY_INFORMATION: Int32 { 0x0000_0001 }

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
    let size = LocalMemory.daclOffset + 8 + (parsed.dacl?.count ?? 0) * (8 + 68)
    let memory = LocalMemory.shared.allocate(byteCount: size, descriptor: parsed)
    if let dacl = parsed.dacl {
        // The ACL header where GetSecurityDescriptorDacl points (ACL_REVISION is 2).
        let header = ACL(
            AclRevision: 2, Sbz1: 0, AclSize: WORD(8 + dacl.count * (8 + 68)), AceCount: WORD(dacl.count), Sbz2: 0)
        (memory + LocalMemory.daclOffset).storeBytes(of: header, as: ACL.self)
    }
    SecurityDescriptor.pointee = memory
    SecurityDescriptorSize?.pointee = ULONG(size)
    return true
}

/// https://learn.microsoft.com/en-us/windows/win32/api/securitybaseapi/nf-securitybaseapi-getsecuritydescriptordacl —
/// `BOOL GetSecurityDescriptorDacl(PSECURITY_DESCRIPTOR pSecurityDescriptor, LPBOOL lpbDaclPresent, PACL *pDacl,
/// LPBOOL lpbDaclDefaulted);` "If lpbDaclPresent is FALSE, the security descriptor does not contain a DACL, and the
/// remaining output parameters do not receive valid values."
public func GetSecurityDescriptorDacl(
    _ pSecurityDescriptor: PSECURITY_DESCRIPTOR!, _ lpbDaclPresent: LPBOOL!, _ pDacl: UnsafeMutablePointer<PACL?>!,
    _ lpbDaclDefaulted: LPBOOL!
) -> Bool {
    if let code = WindowsShimThread.enter("GetSecurityDescriptorDacl") { return fail(code, false) }
    guard let pSecurityDescriptor, let lpbDaclPresent, let pDacl, let lpbDaclDefaulted else {
        return fail(ERROR_INVALID_PARAMETER, false)
    }
    guard let descriptor = LocalMemory.shared.descriptor(at: pSecurityDescriptor) else {
        WindowsShimThread.current.invalidDescriptorUses += 1
        return fail(ERROR_INVALID_SECURITY_DESCR, false)
    }
    guard descriptor.dacl != nil else {
        lpbDaclPresent.pointee = false
        return true
    }
    lpbDaclPresent.pointee = true
    lpbDaclDefaulted.pointee = false
    pDacl.pointee = (pSecurityDescriptor + LocalMemory.daclOffset).assumingMemoryBound(to: ACL.self)
    return true
}

/// https://learn.microsoft.com/en-us/windows/win32/api/aclapi/nf-aclapi-setnamedsecurityinfow —
/// `DWORD SetNamedSecurityInfoW(LPWSTR pObjectName, SE_OBJECT_TYPE ObjectType, SECURITY_INFORMATION SecurityInfo,
/// PSID psidOwner, PSID psidGroup, PACL pDacl, PACL pSacl);` "If the function succeeds, the function returns
/// ERROR_SUCCESS. If the function fails, it returns a nonzero error code defined in WinError.h." Only a file's or
/// folder's DACL is modelled (see the top of this file).
public func SetNamedSecurityInfoW(
    _ pObjectName: LPWSTR!, _ ObjectType: SE_OBJECT_TYPE, _ SecurityInfo: SECURITY_INFORMATION, _ psidOwner: PSID!,
    _ psidGroup: PSID!, _ pDacl: PACL!, _ pSacl: PACL!
) -> DWORD {
    let dacl = DWORD(DACL_SECURITY_INFORMATION), protected = DWORD(PROTECTED_DACL_SECURITY_INFORMATION)
    precondition(ObjectType == SE_FILE_OBJECT, "the WinSDK shim models SE_FILE_OBJECT only")
    precondition(
        SecurityInfo & dacl != 0 && SecurityInfo & ~(dacl | protected) == 0 && psidOwner == nil && psidGroup == nil
            && pSacl == nil,
        "the WinSDK shim models setting the DACL only")
    if let code = WindowsShimThread.enter("SetNamedSecurityInfoW") { return code }
    guard let pObjectName else { return DWORD(ERROR_INVALID_PARAMETER) }
    // The error is the return value; Win32Path sets GetLastError's, which this call does not use.
    guard let path = Win32Path.native(string(pObjectName)) else { return GetLastError() }
    // A NULL DACL (everyone may do everything) is legal on Windows but not modelled: the library never sets one.
    guard let pDacl else { return DWORD(ERROR_INVALID_PARAMETER) }
    let base = UnsafeMutableRawPointer(pDacl) - LocalMemory.daclOffset
    guard let descriptor = LocalMemory.shared.descriptor(at: base), let entries = descriptor.dacl else {
        WindowsShimThread.current.invalidDescriptorUses += 1
        return DWORD(ERROR_INVALID_ACL)
    }
    let applied = SecurityDescriptorModel(
        owner: nil, group: nil, daclFlags: SecurityInfo & protected != 0 ? ["P"] : [], dacl: entries)
    return WindowsFiles.shared.setSecurity(path, .descriptor(applied)) ? 0 : DWORD(ERROR_FILE_NOT_FOUND)
}

/// https://learn.microsoft.com/en-us/windows/win32/api/aclapi/nf-aclapi-getnamedsecurityinfow —
/// `DWORD GetNamedSecurityInfoW(LPCWSTR pObjectName, SE_OBJECT_TYPE ObjectType, SECURITY_INFORMATION SecurityInfo,
/// PSID *ppsidOwner, PSID *ppsidGroup, PACL *ppDacl, PACL *ppSacl, PSECURITY_DESCRIPTOR *ppSecurityDescriptor);`
/// ppsidOwner "receives a pointer to the owner SID in the security descriptor returned in ppSecurityDescriptor";
/// ppSecurityDescriptor: "When you have finished using the pointer, free the returned buffer by calling the LocalFree
/// function. This parameter is required if any one of the ppsidOwner, ppsidGroup, ppDacl, or ppSacl parameters is not
/// NULL." Returns ERROR_SUCCESS or "a nonzero error code defined in WinError.h". Only reading the owner is modelled.
public func GetNamedSecurityInfoW(
    _ pObjectName: LPCWSTR!, _ ObjectType: SE_OBJECT_TYPE, _ SecurityInfo: SECURITY_INFORMATION,
    _ ppsidOwner: UnsafeMutablePointer<PSID?>!, _ ppsidGroup: UnsafeMutablePointer<PSID?>!,
    _ ppDacl: UnsafeMutablePointer<PACL?>!, _ ppSacl: UnsafeMutablePointer<PACL?>!,
    _ ppSecurityDescriptor: UnsafeMutablePointer<PSECURITY_DESCRIPTOR?>!
) -> DWORD {
    precondition(ObjectType == SE_FILE_OBJECT, "the WinSDK shim models SE_FILE_OBJECT only")
    precondition(
        SecurityInfo == DWORD(OWNER_SECURITY_INFORMATION) && ppsidGroup == nil && ppDacl == nil && ppSacl == nil,
        "the WinSDK shim models reading the owner only")
    if let code = WindowsShimThread.enter("GetNamedSecurityInfoW") { return code }
    guard let pObjectName, let ppSecurityDescriptor else { return DWORD(ERROR_INVALID_PARAMETER) }
    guard let path = Win32Path.native(string(pObjectName)) else { return GetLastError() }
    guard let owner = WindowsFiles.shared.owner(atPath: path),
        let sid = WindowsShimUser.binarySID(of: owner)
    else { return DWORD(ERROR_FILE_NOT_FOUND) }
    let model = SecurityDescriptorModel(owner: owner, group: nil, daclFlags: [], dacl: nil)
    // A self-relative descriptor holding only an owner: the 20-byte header (daclOffset is its size), then the SID.
    let memory = LocalMemory.shared.allocate(byteCount: LocalMemory.daclOffset + sid.count, descriptor: model)
    sid.withUnsafeBytes { (memory + LocalMemory.daclOffset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    ppSecurityDescriptor.pointee = memory
    ppsidOwner?.pointee = memory + LocalMemory.daclOffset
    return 0
}

/// https://learn.microsoft.com/en-us/windows/win32/api/securitybaseapi/nf-securitybaseapi-equalsid —
/// `BOOL EqualSid(PSID pSid1, PSID pSid2);` "Two SIDs must match exactly to be considered equal." "If either SID
/// structure is not valid, the return value is undefined."
public func EqualSid(_ pSid1: PSID!, _ pSid2: PSID!) -> Bool {
    if let code = WindowsShimThread.enter("EqualSid") { return fail(code, false) }
    guard let pSid1, let pSid2, let first = WindowsShimUser.text(ofBinarySID: pSid1),
        let second = WindowsShimUser.text(ofBinarySID: pSid2)
    else { return fail(ERROR_INVALID_SID, false) }
    return first == second
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

    /// The user's SID in its binary form.
    static var binarySID: [UInt8] { binarySID(of: sid)! }

    /// A SID string (`S-1-…`, not an alias) in its binary form: revision, sub-authority count, 6-byte big-endian
    /// identifier authority, then each sub-authority as a little-endian 32-bit number
    /// (https://learn.microsoft.com/en-us/windows/win32/secauthz/sid-components); nil when it is not one.
    static func binarySID(of text: String) -> [UInt8]? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0] == "S", parts[1] == "1", let authority = UInt64(parts[2]), authority < 1 << 48
        else { return nil }
        let subAuthorities = parts.dropFirst(3).compactMap { UInt32($0) }
        // SID_MAX_SUB_AUTHORITIES is 15.
        guard subAuthorities.count == parts.count - 3, subAuthorities.count <= 15 else { return nil }
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
    /// Where a descriptor's ACL starts in its memory: after the 20-byte header of a self-relative descriptor.
    static let daclOffset = 20

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
