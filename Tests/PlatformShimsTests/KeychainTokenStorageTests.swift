import AppleShims
import Foundation
import XCTest
@testable import PlatformShims

/// KeychainTokenStorage.swift — the library's file, compiled unchanged in PlatformShims against the Security shims —
/// run against an in-memory keychain that behaves as the SecItem documentation says. If that file stops
/// type-checking, this target does not build and `swift test` fails. What this cannot show: the real keychain's
/// behaviour (entitlements, locked devices, the real SecItem matching rules).
final class KeychainTokenStorageTests: XCTestCase {
    /// A service of its own per test, so tests never see each other's items in the shared keychain.
    private func service(_ name: String = #function) -> String { "cz.profirest.tests.\(name).\(UUID().uuidString)" }

    override func setUp() { InMemoryKeychain.shared.reset() }
    override func tearDown() { InMemoryKeychain.shared.reset() }

    func testSaveLoadReplaceDelete() throws {
        let storage = KeychainTokenStorage(service: service())
        XCTAssertNil(try storage.get("refresh"))
        try storage.set("refresh", "r1")
        XCTAssertEqual(try storage.get("refresh"), "r1")
        try storage.set("refresh", "r2")  // the update path: SecItemUpdate finds the item
        XCTAssertEqual(try storage.get("refresh"), "r2")
        XCTAssertEqual(InMemoryKeychain.shared.items(service: storage.service).count, 1, "replaced, not duplicated")
        try storage.remove("refresh")
        XCTAssertNil(try storage.get("refresh"))
        XCTAssertNoThrow(try storage.remove("refresh"), "removing a missing key is not an error")
    }

    func testKeysAreSeparateItems() throws {
        let storage = KeychainTokenStorage(service: service())
        try storage.set("refresh", "r")
        try storage.set("access", "a")
        XCTAssertEqual(try storage.get("refresh"), "r")
        XCTAssertEqual(try storage.get("access"), "a")
        try storage.remove("access")
        XCTAssertEqual(try storage.get("refresh"), "r")
    }

    func testTwoClientsShareOneItem() throws {
        let name = service()
        let group = "TEAMID.cz.example.shared"
        let app = KeychainTokenStorage(service: name, accessGroup: group)
        let widget = KeychainTokenStorage(service: name, accessGroup: group)
        try app.set("refresh", "r1")
        XCTAssertEqual(try widget.get("refresh"), "r1")
        try widget.set("refresh", "r2")
        XCTAssertEqual(try app.get("refresh"), "r2")
        XCTAssertEqual(InMemoryKeychain.shared.items(service: name).count, 1)
        try app.remove("refresh")
        XCTAssertNil(try widget.get("refresh"))
        // Another access group is another item.
        let other = KeychainTokenStorage(service: name, accessGroup: "TEAMID.other")
        try other.set("refresh", "o")
        XCTAssertNil(try app.get("refresh"))
    }

    /// TokensAndStorage: "generic-password items that are AfterFirstUnlockThisDeviceOnly and never synchronised".
    func testItemsAreAfterFirstUnlockThisDeviceOnlyAndNotSynchronised() throws {
        let group = "TEAMID.cz.example.shared"
        let storage = KeychainTokenStorage(service: service(), accessGroup: group)
        try storage.set("refresh", "r1")
        try storage.set("refresh", "r2")  // still so after an update
        let items = InMemoryKeychain.shared.items(service: storage.service)
        XCTAssertEqual(items.count, 1)
        let item = try XCTUnwrap(items.first)
        XCTAssertEqual(item[kSecClass] as? String, kSecClassGenericPassword)
        XCTAssertEqual(item[kSecAttrAccessible] as? String, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly)
        XCTAssertEqual(item[kSecAttrSynchronizable] as? Bool, false)
        XCTAssertEqual(item[kSecAttrAccessGroup] as? String, group)
        XCTAssertEqual(item[kSecAttrAccount] as? String, "refresh")
        XCTAssertEqual(item[kSecValueData] as? Data, Data("r2".utf8))
    }

    func testCorruptItemIsAClearStorageError() throws {
        let storage = KeychainTokenStorage(service: service())
        InMemoryKeychain.shared.plant([
            kSecClass: kSecClassGenericPassword, kSecAttrService: storage.service, kSecAttrAccount: "refresh",
            kSecAttrSynchronizable: false, kSecAttrAccessGroup: "SHIMTEAM.default",
            kSecAttrAccessible: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            kSecValueData: Data([0xff, 0xfe, 0xfd]),
        ])
        XCTAssertThrowsError(try storage.get("refresh")) { error in
            guard let error = error as? StorageError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.kind, .corrupt)
            XCTAssertEqual(error.path, "keychain \(storage.service)/refresh")
            XCTAssertTrue(error.reason.contains("not UTF-8"), error.reason)
        }
        // Writing over it repairs it (update path), and the value never appears in an error.
        try storage.set("refresh", "fresh")
        XCTAssertEqual(try storage.get("refresh"), "fresh")
    }

    func testRefusalIsAKeychainErrorNamingTheStatusNotTheSecret() throws {
        let storage = KeychainTokenStorage(service: service())
        InMemoryKeychain.shared.failNext(with: errSecInteractionNotAllowed)  // a locked device before first unlock
        XCTAssertThrowsError(try storage.set("refresh", "secret-token")) { error in
            guard let error = error as? StorageError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.kind, .keychain)
            XCTAssertTrue(error.reason.contains("OSStatus -25308"), error.reason)
            XCTAssertTrue(error.reason.contains("write"), error.reason)
            XCTAssertFalse(error.description.contains("secret-token"), error.description)
        }
        InMemoryKeychain.shared.failNext(with: errSecInteractionNotAllowed)
        XCTAssertThrowsError(try storage.get("refresh")) { XCTAssertEqual(($0 as? StorageError)?.kind, .keychain) }
        InMemoryKeychain.shared.failNext(with: errSecInteractionNotAllowed)
        XCTAssertThrowsError(try storage.remove("refresh")) { XCTAssertEqual(($0 as? StorageError)?.kind, .keychain) }
    }

    /// A locked device (before the first unlock) and a missing entitlement (seen at prewarmed launches) are refusals
    /// that pass: the error says so, so that the app waits instead of pairing again; other statuses do not.
    func testLockedAndEntitlementRefusalsAreTransient() throws {
        let storage = KeychainTokenStorage(service: service(), accessGroup: "SHIMTEAM.default")
        try storage.set("tokens", "t1")
        for status in [errSecInteractionNotAllowed, errSecMissingEntitlement] {
            InMemoryKeychain.shared.failNext(with: status)
            XCTAssertThrowsError(try storage.get("tokens")) { error in
                guard let error = error as? StorageError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.kind, .keychain)
                XCTAssertTrue(error.isTransient, "\(status)")
                XCTAssertTrue(error.reason.contains("OSStatus \(status)"), error.reason)
            }
        }
        for status in [errSecIO, errSecDiskFull, errSecAuthFailed] {
            InMemoryKeychain.shared.failNext(with: status)
            XCTAssertThrowsError(try storage.set("tokens", "t2")) { error in
                XCTAssertEqual((error as? StorageError)?.isTransient, false, "\(status)")
            }
        }
        XCTAssertEqual(try storage.get("tokens"), "t1", "nothing changed by the refused calls")
    }

    /// The in-memory keychain refuses a chosen call with a real status, as often as the test decides.
    func testInjectedFailuresAnswerTheChosenCalls() throws {
        let storage = KeychainTokenStorage(service: service())
        let calls = Locked(0)
        InMemoryKeychain.shared.injectFailures { function in
            calls.withLock { count in
                count += 1
                return function == "SecItemCopyMatching" && count == 3 ? errSecIO : nil
            }
        }
        try storage.set("tokens", "t1")
        XCTAssertThrowsError(try storage.get("tokens")) { error in
            XCTAssertTrue((error as? StorageError)?.reason.contains("OSStatus -36") ?? false, "\(error)")
        }
        XCTAssertEqual(try storage.get("tokens"), "t1")
        InMemoryKeychain.shared.reset()
        XCTAssertEqual(try storage.get("tokens"), "t1")
    }

    /// The shim keychain itself behaves as documented (duplicate on add, not found, update of an existing item).
    func testShimKeychainFollowsTheDocumentedStatuses() {
        let name = service()
        let item: [String: Any] = [
            kSecClass: kSecClassGenericPassword, kSecAttrService: name, kSecAttrAccount: "k", kSecValueData: Data("v".utf8),
        ]
        XCTAssertEqual(SecItemAdd(item as CFDictionary, nil), errSecSuccess)
        XCTAssertEqual(SecItemAdd(item as CFDictionary, nil), errSecDuplicateItem)
        let query: [String: Any] = [kSecClass: kSecClassGenericPassword, kSecAttrService: name, kSecAttrAccount: "k"]
        XCTAssertEqual(SecItemUpdate(query as CFDictionary, [kSecValueData: Data("w".utf8)] as CFDictionary), errSecSuccess)
        var result: CFTypeRef?
        var lookup = query
        lookup[kSecReturnData] = true
        lookup[kSecMatchLimit] = kSecMatchLimitOne
        XCTAssertEqual(SecItemCopyMatching(lookup as CFDictionary, &result), errSecSuccess)
        XCTAssertEqual(result as? Data, Data("w".utf8))
        XCTAssertEqual(InMemoryKeychain.shared.items(service: name).first?[kSecAttrAccessible] as? String,
                       kSecAttrAccessibleWhenUnlocked, "the documented default accessibility")
        XCTAssertEqual(SecItemDelete(query as CFDictionary), errSecSuccess)
        XCTAssertEqual(SecItemDelete(query as CFDictionary), errSecItemNotFound)
        XCTAssertEqual(SecItemCopyMatching(lookup as CFDictionary, &result), errSecItemNotFound)
        XCTAssertEqual(SecItemUpdate(query as CFDictionary, [kSecValueData: Data()] as CFDictionary), errSecItemNotFound)
    }
}

/// The two keychains of macOS (Apple's TN3137): the data-protection keychain for a process with a keychain
/// entitlement, the file-based (login) keychain as a knowing fallback for one without, and items of 1.0.0 moved over.
final class MacKeychainTests: XCTestCase {
    private let keychain = InMemoryKeychain.shared
    private func service(_ name: String = #function) -> String { "cz.profirest.tests.\(name).\(UUID().uuidString)" }

    override func setUp() {
        keychain.reset()
        keychain.platform = .macOS
    }

    override func tearDown() { keychain.reset() }

    func testASignedAppUsesTheDataProtectionKeychain() throws {
        keychain.process = .init(accessGroups: ["TEAMID.cz.example.pokladna", "TEAMID.cz.example.shared"], codeIdentity: "TEAMID.app")
        let storage = KeychainTokenStorage(service: service(), accessGroup: "TEAMID.cz.example.shared")
        try storage.set("refresh", "r1")
        XCTAssertEqual(try storage.get("refresh"), "r1")
        XCTAssertEqual(storage.keychain, .dataProtection)
        let item = try XCTUnwrap(keychain.items(service: storage.service).first)
        XCTAssertEqual(item[kSecAttrAccessible] as? String, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly)
        XCTAssertEqual(item[kSecAttrAccessGroup] as? String, "TEAMID.cz.example.shared")
        XCTAssertTrue(keychain.fileBasedItems(service: storage.service).isEmpty, "nothing in the login keychain")
        // Without an access group: the app's default group.
        let own = KeychainTokenStorage(service: service())
        try own.set("refresh", "o1")
        XCTAssertEqual(keychain.items(service: own.service).first?[kSecAttrAccessGroup] as? String, "TEAMID.cz.example.pokladna")
        XCTAssertEqual(keychain.prompts, 0)
    }

    /// A command-line tool (no keychain entitlement) is refused the data-protection keychain and keeps its items in
    /// the file-based one, where accessibility and access groups do not apply and a rebuilt, differently signed tool
    /// is asked about by macOS.
    func testAnUnentitledToolFallsBackToTheFileBasedKeychain() throws {
        keychain.process = .init(accessGroups: nil, codeIdentity: "cdhash-build-1")
        let name = service()
        let storage = KeychainTokenStorage(service: name)
        XCTAssertEqual(storage.keychain, .dataProtection, "not known before the first call")
        XCTAssertNil(try storage.get("refresh"))
        XCTAssertEqual(storage.keychain, .fileBased)
        try storage.set("refresh", "r1")
        try storage.set("refresh", "r2")
        XCTAssertEqual(try storage.get("refresh"), "r2")
        XCTAssertTrue(keychain.items(service: name).isEmpty, "nothing in the data-protection keychain")
        let item = try XCTUnwrap(keychain.fileBasedItems(service: name).first)
        XCTAssertNil(item[kSecAttrAccessible], "no accessibility class in the file-based keychain")
        XCTAssertNil(item[kSecAttrAccessGroup], "no access group either")
        XCTAssertEqual(keychain.prompts, 0, "the program that made the item reads it without a prompt")

        // The tool rebuilt: another code signature. Every read asks the user until "Always Allow".
        keychain.process = .init(accessGroups: nil, codeIdentity: "cdhash-build-2")
        let rebuilt = KeychainTokenStorage(service: name)
        XCTAssertEqual(try rebuilt.get("refresh"), "r2")
        XCTAssertEqual(keychain.prompts, 1)
        keychain.promptAnswer = .alwaysAllow
        XCTAssertEqual(try rebuilt.get("refresh"), "r2")
        XCTAssertEqual(try rebuilt.get("refresh"), "r2")
        XCTAssertEqual(keychain.prompts, 2, "asked once more, then trusted")
        keychain.promptAnswer = .deny
        keychain.process = .init(accessGroups: nil, codeIdentity: "cdhash-build-3")
        XCTAssertThrowsError(try KeychainTokenStorage(service: name).get("refresh")) { error in
            XCTAssertEqual((error as? StorageError)?.kind, .keychain, "a denied prompt is an error, not 'not paired'")
        }
    }

    func testNoFallbackWithAnAccessGroupOrWhenNotAllowed() throws {
        keychain.process = .init(accessGroups: nil, codeIdentity: "cdhash-build-1")
        let shared = KeychainTokenStorage(service: service(), accessGroup: "TEAMID.cz.example.shared")
        XCTAssertThrowsError(try shared.set("refresh", "secret-r1")) { error in
            guard let error = error as? StorageError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.kind, .keychain)
            XCTAssertTrue(error.reason.contains("OSStatus -34018"), error.reason)
            XCTAssertTrue(error.reason.contains("Keychain Sharing capability listing the access group"), error.reason)
            XCTAssertFalse(error.description.contains("secret-r1"))
        }
        XCTAssertEqual(shared.keychain, .dataProtection)
        XCTAssertTrue(keychain.fileBasedItems(service: shared.service).isEmpty, "the group could not be honoured there")

        let strict = KeychainTokenStorage(service: service(), allowsFileBasedKeychain: false)
        XCTAssertThrowsError(try strict.get("refresh")) { XCTAssertEqual(($0 as? StorageError)?.kind, .keychain) }
        XCTAssertTrue(keychain.fileBasedItems(service: strict.service).isEmpty)
        // An app entitled to some groups but not this one is refused too (errSecMissingEntitlement's page).
        keychain.process = .init(accessGroups: ["TEAMID.cz.example.pokladna"], codeIdentity: "TEAMID.app")
        XCTAssertThrowsError(try shared.set("refresh", "r")) {
            XCTAssertTrue(($0 as? StorageError)?.reason.contains("-34018") ?? false)
        }
    }

    /// 1.0.0 did not ask for the data-protection keychain, so on macOS its items are in the file-based one: the first
    /// read moves such an item, and unpairing removes it from both.
    func testItemsOfTheFileBasedKeychainAreMovedOnRead() throws {
        keychain.process = .init(accessGroups: ["TEAMID.cz.example.pokladna"], codeIdentity: "TEAMID.app")
        let name = service()
        keychain.plantInFileBasedKeychain(
            [
                kSecClass: kSecClassGenericPassword, kSecAttrService: name, kSecAttrAccount: "refresh",
                kSecAttrSynchronizable: false, kSecValueData: Data("legacy".utf8),
            ], creator: "TEAMID.app")
        let storage = KeychainTokenStorage(service: name)
        XCTAssertEqual(try storage.get("refresh"), "legacy")
        XCTAssertEqual(storage.keychain, .dataProtection)
        XCTAssertTrue(keychain.fileBasedItems(service: name).isEmpty, "moved, not copied")
        let item = try XCTUnwrap(keychain.items(service: name).first)
        XCTAssertEqual(item[kSecAttrAccessible] as? String, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly)
        XCTAssertEqual(try storage.get("refresh"), "legacy")

        keychain.plantInFileBasedKeychain(
            [
                kSecClass: kSecClassGenericPassword, kSecAttrService: name, kSecAttrAccount: "refresh",
                kSecAttrSynchronizable: false, kSecValueData: Data("stale".utf8),
            ], creator: "TEAMID.app")
        try storage.remove("refresh")
        XCTAssertTrue(keychain.items(service: name).isEmpty)
        XCTAssertTrue(keychain.fileBasedItems(service: name).isEmpty, "no secret left in the login keychain")
        XCTAssertNil(try storage.get("refresh"))
    }

    /// On macOS a SecItem call without `kSecUseDataProtectionKeychain` reaches both keychains (Security's
    /// `SecItemCategorizeQuery`, OSX/libsecurity_keychain/lib/SecItem.cpp): copy, update and delete act on both and
    /// merge, add goes to the file-based one, the data-protection keychain's missing entitlement is ignored.
    func testAQueryWithoutTheKeyReachesBothKeychains() {
        keychain.process = .init(accessGroups: ["TEAMID.app"], codeIdentity: "TEAMID.app")
        let name = service()
        let query: [String: Any] = [kSecClass: kSecClassGenericPassword, kSecAttrService: name, kSecAttrAccount: "k"]
        var modern = query
        modern[kSecUseDataProtectionKeychain] = true
        modern[kSecValueData] = Data("modern".utf8)
        XCTAssertEqual(SecItemAdd(modern as CFDictionary, nil), errSecSuccess)
        var lookup = query
        lookup[kSecReturnData] = true
        var result: CFTypeRef?
        XCTAssertEqual(SecItemCopyMatching(lookup as CFDictionary, &result), errSecSuccess, "found in data protection")
        XCTAssertEqual(result as? Data, Data("modern".utf8))
        var legacy = query
        legacy[kSecValueData] = Data("legacy".utf8)
        XCTAssertEqual(SecItemAdd(legacy as CFDictionary, nil), errSecSuccess, "an add without the key: file-based")
        XCTAssertEqual(keychain.fileBasedItems(service: name).count, 1)
        XCTAssertEqual(SecItemCopyMatching(lookup as CFDictionary, &result), errSecSuccess)
        XCTAssertEqual(result as? Data, Data("modern".utf8), "both found: the data-protection item")
        XCTAssertEqual(SecItemUpdate(query as CFDictionary, [kSecValueData: Data("both".utf8)] as CFDictionary), errSecSuccess)
        XCTAssertEqual(keychain.items(service: name).first?[kSecValueData] as? Data, Data("both".utf8))
        XCTAssertEqual(keychain.fileBasedItems(service: name).first?[kSecValueData] as? Data, Data("both".utf8))
        XCTAssertEqual(SecItemDelete(query as CFDictionary), errSecSuccess)
        XCTAssertTrue(keychain.items(service: name).isEmpty, "the delete reached the data-protection keychain too")
        XCTAssertTrue(keychain.fileBasedItems(service: name).isEmpty)
        // The key said false: the file-based keychain alone.
        XCTAssertEqual(SecItemAdd(modern as CFDictionary, nil), errSecSuccess)
        var fileOnly = query
        fileOnly[kSecUseDataProtectionKeychain] = false
        XCTAssertEqual(SecItemDelete(fileOnly as CFDictionary), errSecItemNotFound)
        XCTAssertEqual(keychain.items(service: name).count, 1)
        // An unentitled program: the data-protection keychain's refusal is ignored, the file-based answer is the answer.
        keychain.process = .init(accessGroups: nil, codeIdentity: "unsigned")
        XCTAssertEqual(SecItemCopyMatching(lookup as CFDictionary, &result), errSecItemNotFound)
        XCTAssertEqual(SecItemAdd(legacy as CFDictionary, nil), errSecSuccess)
        XCTAssertEqual(SecItemCopyMatching(lookup as CFDictionary, &result), errSecSuccess)
        XCTAssertEqual(result as? Data, Data("legacy".utf8))
    }

    /// The moved item survives reads and a later process: the delete of the old item names the file-based keychain
    /// alone (it would otherwise reach the new copy as well and forget the pairing after one read).
    func testAMovedItemIsStillThereForTheNextProcess() throws {
        keychain.process = .init(accessGroups: ["TEAMID.cz.example.pokladna"], codeIdentity: "TEAMID.app")
        let name = service()
        keychain.plantInFileBasedKeychain(
            [
                kSecClass: kSecClassGenericPassword, kSecAttrService: name, kSecAttrAccount: "tokens",
                kSecAttrSynchronizable: false, kSecValueData: Data("paired".utf8),
            ], creator: "TEAMID.app")
        XCTAssertEqual(try KeychainTokenStorage(service: name).get("tokens"), "paired")
        for _ in 0..<3 { XCTAssertEqual(try KeychainTokenStorage(service: name).get("tokens"), "paired") }
        XCTAssertEqual(keychain.items(service: name).count, 1)
        XCTAssertTrue(keychain.fileBasedItems(service: name).isEmpty)
        XCTAssertEqual(keychain.prompts, 0)
    }

    /// On iOS (and tvOS, watchOS, visionOS) the key is ignored: one keychain, and no fallback to look for.
    func testOtherPlatformsHaveOneKeychain() throws {
        keychain.platform = .iOS
        keychain.process = .init(accessGroups: nil, codeIdentity: "unsigned")
        let storage = KeychainTokenStorage(service: service())
        XCTAssertThrowsError(try storage.set("refresh", "r1")) {
            XCTAssertTrue(($0 as? StorageError)?.reason.contains("-34018") ?? false)
        }
        XCTAssertEqual(storage.keychain, .dataProtection, "the retry reached the same keychain and was refused too")
    }

    /// iOS answers errSecMissingEntitlement for a moment at prewarmed launches, then works again. There is no second
    /// keychain there to fall back to: the refusal is the transient error, the storage stays on the data-protection
    /// keychain, and the next call works — a retry that happened to pass must not be taken for a file-based keychain.
    func testATransientEntitlementRefusalOnIOSIsNoFallback() throws {
        keychain.platform = .iOS
        let storage = KeychainTokenStorage(service: service())
        try storage.set("tokens", "t1")
        let calls = Locked(0)
        keychain.injectFailures { _ in
            calls.withLock { count in
                count += 1
                return count == 1 ? errSecMissingEntitlement : nil
            }
        }
        XCTAssertThrowsError(try storage.get("tokens")) { error in
            XCTAssertEqual((error as? StorageError)?.isTransient, true, "\(error)")
        }
        XCTAssertEqual(calls.withLock { $0 }, 1, "one call: nothing to fall back to")
        XCTAssertEqual(storage.keychain, .dataProtection)
        XCTAssertEqual(try storage.get("tokens"), "t1")
        XCTAssertEqual(storage.keychain, .dataProtection)
    }
}

/// An app and its extension sharing an access group write the same item at once: both find none, both add it.
final class KeychainRaceTests: XCTestCase {
    private let keychain = InMemoryKeychain.shared
    private let group = "TEAMID.cz.example.shared"

    override func setUp() { keychain.reset() }
    override func tearDown() { keychain.reset() }

    /// What the other process does in between; it must work.
    private static func meanwhile(_ action: () throws -> Void) {
        do { try action() } catch { XCTFail("the other process failed: \(error)") }
    }

    func testADuplicateAddFromAnotherProcessBecomesAnUpdate() throws {
        let name = "cz.profirest.tests.race.\(UUID().uuidString)"
        let app = KeychainTokenStorage(service: name, accessGroup: group)
        let extensionStorage = KeychainTokenStorage(service: name, accessGroup: group)
        // Between the app's update (no item yet) and its add, the extension adds the item.
        keychain.beforeNext("SecItemAdd") { Self.meanwhile { try extensionStorage.set("refresh", "from-extension") } }
        XCTAssertNoThrow(try app.set("refresh", "from-app"), "errSecDuplicateItem is not thrown")
        XCTAssertEqual(try extensionStorage.get("refresh"), "from-app", "the app wrote last")
        XCTAssertEqual(keychain.items(service: name).count, 1)
    }

    func testAnItemDeletedAgainInBetweenIsAddedAgain() throws {
        let name = "cz.profirest.tests.race.\(UUID().uuidString)"
        let app = KeychainTokenStorage(service: name, accessGroup: group)
        let other = KeychainTokenStorage(service: name, accessGroup: group)
        // The other process adds the item before our add, and deletes it before our second update.
        keychain.beforeNext("SecItemAdd") { Self.meanwhile { try other.set("refresh", "other") } }
        keychain.beforeNext("SecItemUpdate") {}  // our first update: nothing happens in between
        keychain.beforeNext("SecItemUpdate") { Self.meanwhile { try other.remove("refresh") } }
        XCTAssertNoThrow(try app.set("refresh", "mine"))
        XCTAssertEqual(try other.get("refresh"), "mine")
        XCTAssertEqual(keychain.items(service: name).count, 1)
    }
}
