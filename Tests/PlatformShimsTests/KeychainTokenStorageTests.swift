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

    /// README: "generic-password items that are AfterFirstUnlockThisDeviceOnly and never synchronised".
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
