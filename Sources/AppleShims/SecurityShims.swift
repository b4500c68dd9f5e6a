// Test-only declaration shims of exactly the Security framework API that
// Sources/ProfirestAPI/Storage/KeychainTokenStorage.swift uses, so that file is type-checked and its logic tested on
// Linux (target PlatformShims, condition PROFIREST_SHIMS). Never part of the ProfirestAPI library or any product.
//
// Each declaration copies the Swift signature from Apple's documentation page cited next to it. Where a page could not
// be confirmed while writing this, the comment says so. What cannot be reproduced on Linux, and is therefore weaker
// than the real SDK:
// - `CFString` and `CFDictionary` are typealiases of `String` and `[String: Any]`, because Linux Swift has no
//   Objective-C bridging: `x as CFDictionary` / `kSecClass as String` must compile, and only a same-type `as` does.
//   So a missing `as CFDictionary` or `as String` is NOT caught here (the real SDK would reject it).
// - The raw string values of the `kSec…` constants are Apple's from the open-source Security project as we recall
//   them (e.g. "genp", "cku"); the documentation only says `CFString`. Nothing here depends on their values.
import Foundation

/// https://developer.apple.com/documentation/kernel/osstatus — `typealias OSStatus = Int32` (not confirmed from the
/// docs corpus in this session; OSStatus is Int32 in every Apple SDK).
public typealias OSStatus = Int32
/// https://developer.apple.com/documentation/corefoundation/cftyperef — `typealias CFTypeRef = AnyObject`
/// (page not confirmed in this session).
public typealias CFTypeRef = AnyObject
/// Weaker than Apple's class `CFString`; see the file header.
public typealias CFString = String
/// Weaker than Apple's class `CFDictionary`; see the file header.
public typealias CFDictionary = [String: Any]

// MARK: Result codes — https://developer.apple.com/documentation/security/security-framework-result-codes

/// https://developer.apple.com/documentation/security/errsecsuccess — `var errSecSuccess: OSStatus { get }`
/// (page URL by the same pattern as errSecItemNotFound; not fetched in this session)
public var errSecSuccess: OSStatus { 0 }
/// https://developer.apple.com/documentation/security/errsecitemnotfound — `var errSecItemNotFound: OSStatus { get }`
/// (confirmed)
public var errSecItemNotFound: OSStatus { -25300 }
/// https://developer.apple.com/documentation/security/errsecduplicateitem — `var errSecDuplicateItem: OSStatus { get }`
/// (confirmed; its discussion gives the generic-password primary keys the in-memory keychain uses: class, account,
/// service, access group, synchronizable)
public var errSecDuplicateItem: OSStatus { -25299 }
/// https://developer.apple.com/documentation/security/errsecparam — `var errSecParam: OSStatus { get }`
/// (page not fetched in this session)
public var errSecParam: OSStatus { -50 }

/// https://developer.apple.com/documentation/security/errsecinteractionnotallowed —
/// `var errSecInteractionNotAllowed: OSStatus { get }` (page not fetched in this session)
public var errSecInteractionNotAllowed: OSStatus { -25308 }

/// https://developer.apple.com/documentation/security/errsecmissingentitlement —
/// `var errSecMissingEntitlement: OSStatus { get }`, "A required entitlement is missing"; SecItemAdd returns it "when
/// you specify an access group to which your app doesn't belong", and the data-protection keychain answers a process
/// without a keychain entitlement with it. -34018 (the value the page's examples and Apple's forums show).
public var errSecMissingEntitlement: OSStatus { -34018 }

/// https://developer.apple.com/documentation/security/errsecio — `var errSecIO: OSStatus { get }`, "I/O error."
/// -36 (Security's base/SecBase.h, apple-oss-distributions/Security-61901, line 330). Injected by the fault tests.
public var errSecIO: OSStatus { -36 }
/// https://developer.apple.com/documentation/security/errsecdiskfull — `var errSecDiskFull: OSStatus { get }`, "The
/// disk is full." -34 (base/SecBase.h, line 328). Injected by the fault tests.
public var errSecDiskFull: OSStatus { -34 }
/// https://developer.apple.com/documentation/security/errsecnotavailable — `var errSecNotAvailable: OSStatus { get }`,
/// "No keychain is available." -25291 (base/SecBase.h, line 344). Injected by the fault tests.
public var errSecNotAvailable: OSStatus { -25291 }

/// https://developer.apple.com/documentation/security/errsecauthfailed — `var errSecAuthFailed: OSStatus { get }`,
/// "Authorization and/or authentication failed." -25293. What the in-memory keychain answers when the user denies a
/// file-based keychain prompt (what macOS returns then is not documented; the library only reports it).
public var errSecAuthFailed: OSStatus { -25293 }

// MARK: Keys and values — https://developer.apple.com/documentation/security/item-class-keys-and-values,
// https://developer.apple.com/documentation/security/item-attribute-keys-and-values,
// https://developer.apple.com/documentation/security/item-return-result-keys,
// https://developer.apple.com/documentation/security/search-attribute-keys-and-values
// Each is documented as `let kSec…: CFString` (the individual pages were not fetched in this session).

/// https://developer.apple.com/documentation/security/ksecclass
public let kSecClass: CFString = "class"
/// https://developer.apple.com/documentation/security/ksecclassgenericpassword
public let kSecClassGenericPassword: CFString = "genp"
/// https://developer.apple.com/documentation/security/ksecattrservice
public let kSecAttrService: CFString = "svce"
/// https://developer.apple.com/documentation/security/ksecattraccount
public let kSecAttrAccount: CFString = "acct"
/// https://developer.apple.com/documentation/security/ksecattrsynchronizable
public let kSecAttrSynchronizable: CFString = "sync"
/// https://developer.apple.com/documentation/security/ksecattraccessgroup
public let kSecAttrAccessGroup: CFString = "agrp"
/// https://developer.apple.com/documentation/security/ksecattraccessible
public let kSecAttrAccessible: CFString = "pdmn"
/// https://developer.apple.com/documentation/security/ksecattraccessibleafterfirstunlockthisdeviceonly
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
/// https://developer.apple.com/documentation/security/ksecattraccessiblewhenunlocked — the documented default when
/// an item is added without `kSecAttrAccessible`.
public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
/// https://developer.apple.com/documentation/security/ksecvaluedata
public let kSecValueData: CFString = "v_Data"
/// https://developer.apple.com/documentation/security/ksecreturndata
public let kSecReturnData: CFString = "r_Data"
/// https://developer.apple.com/documentation/security/ksecmatchlimit
public let kSecMatchLimit: CFString = "m_Limit"
/// https://developer.apple.com/documentation/security/ksecmatchlimitone
public let kSecMatchLimitOne: CFString = "m_LimitOne"
/// https://developer.apple.com/documentation/security/ksecusedataprotectionkeychain — `let
/// kSecUseDataProtectionKeychain: CFString` (iOS 13, macOS 10.15). "Set the value for this key to true in the query
/// dictionary when accessing a macOS keychain item that behaves like an iOS keychain item … The data protection key
/// affects operations only in macOS. Other platforms automatically behave as if the key is set to true, and ignore the
/// key in the query dictionary. You can safely use the key on all platforms." (confirmed)
public let kSecUseDataProtectionKeychain: CFString = "nleg"

// MARK: Functions

/// https://developer.apple.com/documentation/security/secitemadd(_:_:) —
/// `func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus`
/// (confirmed)
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    result?.pointee = nil
    return InMemoryKeychain.shared.add(attributes)
}

/// https://developer.apple.com/documentation/security/secitemcopymatching(_:_:) —
/// `func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus`
/// (confirmed)
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    let (status, value) = InMemoryKeychain.shared.copyMatching(query)
    result?.pointee = value
    return status
}

/// https://developer.apple.com/documentation/security/secitemupdate(_:_:) —
/// `func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus` (confirmed)
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    InMemoryKeychain.shared.update(query, attributesToUpdate)
}

/// https://developer.apple.com/documentation/security/secitemdelete(_:) —
/// `func SecItemDelete(_ query: CFDictionary) -> OSStatus` (confirmed)
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    InMemoryKeychain.shared.delete(query)
}

/// https://developer.apple.com/documentation/security/seccopyerrormessagestring(_:_:) —
/// `func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString?` (confirmed)
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    switch status {
    case errSecSuccess: return "No error."
    case errSecItemNotFound: return "The specified item could not be found in the keychain."
    case errSecDuplicateItem: return "The specified item already exists in the keychain."
    case errSecParam: return "One or more parameters passed to a function were not valid."
    case errSecInteractionNotAllowed: return "User interaction is not allowed."
    case errSecMissingEntitlement: return "A required entitlement isn't present."
    case errSecAuthFailed: return "The user name or passphrase you entered is not correct."
    case errSecIO: return "I/O error."
    case errSecDiskFull: return "The disk is full."
    case errSecNotAvailable: return "No keychain is available. You may need to restart your computer."
    default: return nil
    }
}

// MARK: Darwin

/// Darwin's sys/fcntl.h: `#define F_FULLFSYNC 51` ("fsync + ask the drive to flush to the media"), an `int` literal:
/// Int32. https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/man2/fcntl.2.html
/// (F_FULLFSYNC). Linux has no such command.
public var F_FULLFSYNC: Int32 { 51 }
