import Foundation

/// The keychain behind the Security shims: one per process, shared by every caller like the device's keychain is
/// shared by an app's processes. Behaves as the SecItem documentation describes for generic passwords:
/// - an item is identified by class, service, account, access group and synchronizable; adding a second one is
///   `errSecDuplicateItem`;
/// - a query matches the items whose attributes equal every attribute it names (the `r_`/`m_` keys are not
///   attributes); a query without an access group searches every group;
/// - `SecItemCopyMatching`/`SecItemUpdate`/`SecItemDelete` with no match are `errSecItemNotFound`;
/// - `kSecValueData` must be `Data`, `kSecClass` is required on add (`errSecParam` otherwise);
/// - an item added without `kSecAttrAccessible` gets the documented default, `kSecAttrAccessibleWhenUnlocked`.
/// Only what KeychainTokenStorage uses is implemented (one item returned as data, no references or attributes).
public final class InMemoryKeychain: @unchecked Sendable {
    /// The process's keychain. Usage: `InMemoryKeychain.shared.items(service: "s")`
    public static let shared = InMemoryKeychain()

    private let lock = NSLock()
    private var stored: [[String: Any]] = []
    private static let defaultAccessGroup = "SHIMTEAM.default"
    private static let identity = [kSecClass, kSecAttrService, kSecAttrAccount, kSecAttrAccessGroup, kSecAttrSynchronizable]

    /// Every attribute of the items filed under `service` (a copy), for tests.
    public func items(service: String) -> [[String: Any]] {
        lock.withLock { stored.filter { Self.same($0[kSecAttrService], service) } }
    }

    /// Files an item as-is, bypassing validation — a corrupt item another app or an old version left behind.
    public func plant(_ item: [String: Any]) {
        lock.withLock { stored.append(item) }
    }

    /// The next SecItem call returns `status` and changes nothing — e.g. `errSecInteractionNotAllowed`, what the
    /// real keychain answers before the first unlock.
    public func failNext(with status: OSStatus) {
        lock.withLock { pendingFailure = status }
    }

    private var pendingFailure: OSStatus?

    private func takeFailure() -> OSStatus? {
        lock.withLock {
            defer { pendingFailure = nil }
            return pendingFailure
        }
    }

    func add(_ attributes: [String: Any]) -> OSStatus {
        if let failure = takeFailure() { return failure }
        guard attributes[kSecClass] != nil else { return errSecParam }
        if let value = attributes[kSecValueData], !(value is Data) { return errSecParam }
        var item = attributes.filter { !Self.isMeta($0.key) }
        if item[kSecAttrAccessGroup] == nil { item[kSecAttrAccessGroup] = Self.defaultAccessGroup }
        if item[kSecAttrSynchronizable] == nil { item[kSecAttrSynchronizable] = false }
        if item[kSecAttrAccessible] == nil { item[kSecAttrAccessible] = kSecAttrAccessibleWhenUnlocked }
        return lock.withLock {
            if stored.contains(where: { Self.sameIdentity($0, item) }) { return errSecDuplicateItem }
            stored.append(item)
            return errSecSuccess
        }
    }

    func copyMatching(_ query: [String: Any]) -> (OSStatus, CFTypeRef?) {
        if let failure = takeFailure() { return (failure, nil) }
        return lock.withLock { () -> (OSStatus, CFTypeRef?) in
            guard let item = stored.first(where: { Self.matches($0, query) }) else { return (errSecItemNotFound, nil) }
            guard Self.same(query[kSecReturnData], true) else { return (errSecSuccess, nil) }
            return (errSecSuccess, item[kSecValueData].map { $0 as AnyObject })
        }
    }

    func update(_ query: [String: Any], _ attributesToUpdate: [String: Any]) -> OSStatus {
        if let failure = takeFailure() { return failure }
        if attributesToUpdate[kSecClass] != nil || attributesToUpdate.keys.contains(where: Self.isMeta) {
            return errSecParam
        }
        if let value = attributesToUpdate[kSecValueData], !(value is Data) { return errSecParam }
        return lock.withLock {
            var found = false
            for i in stored.indices where Self.matches(stored[i], query) {
                found = true
                stored[i].merge(attributesToUpdate) { _, new in new }
            }
            return found ? errSecSuccess : errSecItemNotFound
        }
    }

    func delete(_ query: [String: Any]) -> OSStatus {
        if let failure = takeFailure() { return failure }
        return lock.withLock {
            let before = stored.count
            stored.removeAll { Self.matches($0, query) }
            return stored.count == before ? errSecItemNotFound : errSecSuccess
        }
    }

    private static func isMeta(_ key: String) -> Bool { key.hasPrefix("r_") || key.hasPrefix("m_") }

    private static func matches(_ item: [String: Any], _ query: [String: Any]) -> Bool {
        query.allSatisfy { key, value in isMeta(key) || same(item[key], value) }
    }

    private static func sameIdentity(_ a: [String: Any], _ b: [String: Any]) -> Bool {
        identity.allSatisfy { same(a[$0], b[$0]) }
    }

    private static func same(_ a: Any?, _ b: Any?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (a?, b?):
            guard let a = a as? AnyHashable, let b = b as? AnyHashable else { return false }
            return a == b
        default: return false
        }
    }
}
