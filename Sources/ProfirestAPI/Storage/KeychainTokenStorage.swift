// Apple only, and small, using only long-documented API. On Linux the test-only target PlatformShims compiles this
// same file (PROFIREST_SHIMS) against declaration shims of Security (Sources/AppleShims); see Tests/PlatformShimsTests.
#if canImport(Security) || PROFIREST_SHIMS
import Foundation
#if PROFIREST_SHIMS
import AppleShims
#else
import Security
#endif

/// Keeps tokens in the system keychain as generic passwords, on this device only (never synced through
/// iCloud) and readable after the first unlock, so background refreshes work. Not a `LockingTokenStorage`:
/// the keychain has no cross-process lock.
///
/// ```swift
/// let storage = KeychainTokenStorage(service: "cz.example.pichacka")
/// ```
public final class KeychainTokenStorage: TokenStorage {
    /// The keychain service the items are filed under, which keeps this app's items apart from others'.
    public let service: String
    /// The keychain access group that lets apps of one team share the items, if any.
    public let accessGroup: String?

    /// Makes a storage that files its items under `service`, and in `accessGroup` when apps of one team share them.
    ///
    /// ```swift
    /// let storage = KeychainTokenStorage(service: "cz.example.pokladna", accessGroup: "TEAMID.cz.example.shared")
    /// ```
    public init(service: String = "cz.profirest.api", accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    /// Reads the item for `key`, or nil when there is none; a refusal of the keychain throws ``StorageError``
    /// (`.keychain`) with its status.
    public func get(_ key: String) throws -> String? {
        var query = itemQuery(key)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess else { throw failure("read", key, status) }
        guard let data = result as? Data, let value = String(data: data, encoding: .utf8) else {
            throw StorageError(
                kind: .corrupt, path: location(key),
                reason: "the keychain item is not UTF-8 text; delete it (this forgets the pairing)")
        }
        return value
    }

    /// Writes the item for `key`, readable after the device's first unlock and never synchronised to other devices.
    public func set(_ key: String, _ value: String) throws {
        let attributes: [String: Any] = [
            kSecValueData as String: Data(value.utf8),
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(itemQuery(key) as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            let item = itemQuery(key).merging(attributes) { _, new in new }
            status = SecItemAdd(item as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw failure("write", key, status) }
    }

    /// Deletes the item for `key`; a missing item is not an error.
    public func remove(_ key: String) throws {
        let status = SecItemDelete(itemQuery(key) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw failure("delete", key, status) }
    }

    private func itemQuery(_ key: String) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: key,
            kSecAttrSynchronizable as String: false,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    private func location(_ key: String) -> String { "keychain \(service)/\(key)" }

    /// The OSStatus and the system's text for it; never the secret.
    private func failure(_ operation: String, _ key: String, _ status: OSStatus) -> StorageError {
        let message = SecCopyErrorMessageString(status, nil) as String? ?? "unknown error"
        return StorageError(
            kind: .keychain, path: location(key),
            reason: "the keychain refused to \(operation) the item (OSStatus \(status): \(message)); "
                + "check the app's keychain entitlements and that the device has been unlocked since boot")
    }
}
#endif
