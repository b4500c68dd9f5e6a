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
/// iCloud) and readable after the first unlock, so background refreshes work; with an app group, an app and its
/// extensions refresh one after another.
///
/// The keychain has no lock of its own, so `withLock` takes one beside it. Given an `appGroup` — one the app and each
/// extension sharing the items list in their App Groups entitlement — it is an exclusive `flock` on a file in the
/// group's container (`FileManager`'s `containerURL(forSecurityApplicationGroupIdentifier:)`), which keeps out every
/// process of the group, the app, its widget and its intents, as well as this process's other threads and tasks: a
/// single-use refresh token is spent once, by whichever comes first, and the others read the new tokens. The kernel
/// drops the lock when its holder exits or is killed. Without an app group the lock keeps out this process's threads
/// and tasks only. The lock covers all of the service's items, whatever the key.
///
/// The items live in the data-protection keychain — the only keychain of iOS, iPadOS, tvOS, watchOS and visionOS, and
/// on macOS the one an app signed with a keychain entitlement (Keychain Sharing, or an app group) uses with
/// `kSecUseDataProtectionKeychain`. Only there do `AfterFirstUnlockThisDeviceOnly` and the access group apply.
/// A macOS process without such an entitlement — a command-line tool, an unsigned or ad-hoc-signed build,
/// `swift run` — is refused it (`errSecMissingEntitlement`); unless you ask otherwise (`allowsFileBasedKeychain`)
/// the storage then keeps its items in the file-based (login) keychain instead, and ``keychain`` says so. There an
/// item is readable whenever the login keychain is unlocked, has no access group, and is guarded by an access list
/// naming the program that created it by its code signature: a program signed otherwise — an unsigned tool rebuilt —
/// makes macOS ask the user to allow it. With an access group there is no such fallback: the group could not be
/// honoured, so the entitlement error is thrown.
///
/// Items that version 1.0.0 wrote on macOS are in the file-based keychain (it did not ask for the data-protection
/// one); reading a key that the data-protection keychain does not have moves such an item there.
///
/// ```swift
/// let storage = KeychainTokenStorage(
///     service: "cz.example.pichacka", accessGroup: "TEAMID.cz.example.shared", appGroup: "group.cz.example")
/// ```
public final class KeychainTokenStorage: LockingTokenStorage {
    /// The keychain service the items are filed under, which keeps this app's items apart from others'.
    public let service: String
    /// The keychain access group that lets apps of one team share the items, if any.
    public let accessGroup: String?
    /// The app group in whose container the lock across processes is kept, if any.
    public let appGroup: String?
    /// Whether a macOS process refused the data-protection keychain for want of an entitlement may keep its items in
    /// the file-based keychain instead (with no access group asked for only).
    public let allowsFileBasedKeychain: Bool

    /// The two keychain implementations of macOS (Apple's TN3137); the other Apple platforms have the first only.
    public enum Keychain: Sendable, Hashable {
        /// The data-protection keychain: accessibility classes, access groups, this device only.
        case dataProtection
        /// macOS's file-based (login) keychain: readable while it is unlocked, no access groups, an access list per
        /// item that names the programs allowed to read it.
        case fileBased
    }

    private let inUse = Locked(Keychain.dataProtection)

    /// This process's side of the lock, shared by every storage of one service and access group: `flock` belongs to
    /// an open file, and says nothing about which of our threads holds it.
    private static let processLocks = OwnedLockTable()

    /// The keychain this storage's items are in: `.dataProtection`, or `.fileBased` once a macOS process without a
    /// keychain entitlement fell back to it (known after the first call).
    ///
    /// ```swift
    /// if storage.keychain == .fileBased { print("tokens in the login keychain: sign the app with Keychain Sharing") }
    /// ```
    public var keychain: Keychain { inUse.withLock { $0 } }

    /// Makes a storage that files its items under `service`, and in `accessGroup` when apps of one team share them,
    /// locking across the processes of `appGroup`.
    ///
    /// - Parameters:
    ///   - service: the keychain service the items are filed under.
    ///   - accessGroup: the access group apps of one team share the items in (needs the Keychain Sharing entitlement
    ///     listing it); nil for the app's own.
    ///   - appGroup: the app group (App Groups entitlement of the app and of each extension sharing the items) whose
    ///     container holds the lock file, so that the processes sharing the items refresh one at a time; nil locks
    ///     this process's threads only.
    ///   - allowsFileBasedKeychain: whether a macOS process without a keychain entitlement keeps its items in the
    ///     file-based keychain instead of failing (see the type's discussion); ignored with an access group.
    ///
    /// ```swift
    /// let storage = KeychainTokenStorage(
    ///     service: "cz.example.pokladna", accessGroup: "TEAMID.cz.example.shared", appGroup: "group.cz.example")
    /// ```
    public init(
        service: String = "cz.profirest.api", accessGroup: String? = nil, appGroup: String? = nil,
        allowsFileBasedKeychain: Bool = true
    ) {
        self.service = service
        self.accessGroup = accessGroup
        self.appGroup = appGroup
        self.allowsFileBasedKeychain = allowsFileBasedKeychain
    }

    /// Runs `body` holding the lock of this service's items: with an app group, a `flock` on a file in its container
    /// that keeps out the other processes of the group (an app's widget and intents) and this process's other
    /// threads; without one, this process's other threads only. `get`, `set` and `remove` work inside it.
    ///
    /// - Parameters:
    ///   - key: the storage key the lock is for (the lock covers every item of the service, whatever the key).
    ///   - body: the work to do under the lock; `get`, `set` and `remove` may be called inside it.
    /// - Returns: what `body` returns.
    /// - Throws: ``StorageError`` when the group has no container or its lock file cannot be made or locked
    ///   (`.lockFailed`), or this thread already holds the lock (`.reentrantLock`), and whatever `body` throws.
    ///
    /// ```swift
    /// try storage.withLock("tokens") { try storage.set("tokens", renewed(try storage.get("tokens"))) }
    /// ```
    public func withLock<T>(_ key: String, _ body: () throws -> T) throws -> T {
        let processLock = try unheldLock(key)
        processLock.acquire()
        defer { processLock.release() }
        guard let lockPath = try lockFile() else { return try body() }
        let fileLock = try PosixFileLock.acquire(path: lockPath)
        defer { fileLock.release() }
        return try body()
    }

    /// Runs `body` holding the same lock as ``withLock(_:_:)``, without blocking the calling thread: the task waits for
    /// this process's other tasks suspended, and for another process of the app group on one of the few threads the
    /// process shares for such waits.
    ///
    /// - Parameters:
    ///   - key: the storage key the lock is for (the lock covers every item of the service, whatever the key).
    ///   - body: the work to do under the lock, which may await; `get`, `set` and `remove` may be called inside it.
    /// - Returns: what `body` returns.
    /// - Throws: ``StorageError`` when the group has no container or its lock file cannot be made or locked
    ///   (`.lockFailed`), or the calling task already holds the lock (`.reentrantLock`), and whatever `body` throws.
    ///
    /// ```swift
    /// try await storage.withAsyncLock("tokens") { try storage.get("tokens") }
    /// ```
    public func withAsyncLock<T: Sendable>(_ key: String, _ body: @Sendable () async throws -> T) async throws -> T {
        try await unheldLock(key).withAsyncLock {
            guard let lockPath = try lockFile() else { return try await body() }
            let held = try await BlockingPool.shared.run { HeldFileLock(try PosixFileLock.acquire(path: lockPath)) }
            defer { held.lock.release() }
            return try await body()
        }
    }

    /// This process's lock of the service's items (every key of the service shares it).
    private func unheldLock(_ key: String) throws -> OwnedLock {
        try Self.processLocks.unheldLock(
            "\(accessGroup ?? "")/\(service)", key: key, path: "keychain \(service)", scope: "keychain service")
    }

    /// The lock file in the app group's container, the container made when missing (on macOS the system returns its
    /// path even before it exists); nil without an app group.
    private func lockFile() throws -> String? {
        guard let appGroup else { return nil }
        guard let container = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: appGroup) else {
            throw StorageError(
                kind: .lockFailed, path: "app group \(appGroup)",
                reason: "the app group has no container; list it in the App Groups entitlement of the app and of "
                    + "each extension that shares the keychain items")
        }
        try? FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
        // One file per service; characters a file name should not carry become "_" (two services sharing a file
        // only share a lock).
        let name = String(service.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" })
        return container.appendingPathComponent("ProfirestAPI-\(name).lock").path
    }

    /// Reads the item for `key`, or nil when there is none; a refusal of the keychain throws ``StorageError``
    /// (`.keychain`) with its status, transient (``StorageError/isTransient``) for a locked device or a missing
    /// entitlement.
    ///
    /// - Parameter key: the storage key, such as `profirest-api:profirest-pos`.
    /// - Returns: the item's value, or nil when there is no item.
    /// - Throws: ``StorageError`` when the keychain refuses (`.keychain`, with its status) or the item is not text
    ///   (`.corrupt`).
    public func get(_ key: String) throws -> String? {
        var data: Data?
        var status = perform { dataProtection in copy(key, dataProtection: dataProtection, into: &data) }
        if status == errSecItemNotFound, keychain == .dataProtection {
            // An item of 1.0.0 in macOS's file-based keychain (elsewhere this finds nothing: there is one keychain).
            status = copy(key, dataProtection: false, into: &data)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let legacy = data else { throw failure("read", key, status) }
            let moved = SecItemAdd(item(key, legacy, dataProtection: true) as CFDictionary, nil)
            if moved == errSecSuccess { _ = SecItemDelete(itemQuery(key, dataProtection: false) as CFDictionary) }
        }
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess else { throw failure("read", key, status) }
        guard let data, let value = String(data: data, encoding: .utf8) else {
            throw StorageError(
                kind: .corrupt, path: location(key),
                reason: "the keychain item is not UTF-8 text; delete it (this forgets the pairing)")
        }
        return value
    }

    /// Writes the item for `key`, readable after the device's first unlock and never synchronised to other devices.
    ///
    /// - Parameters:
    ///   - key: the storage key, such as `profirest-api:profirest-pos`.
    ///   - value: the text to store.
    /// - Throws: ``StorageError`` (`.keychain`, with its status) when the keychain refuses the write.
    public func set(_ key: String, _ value: String) throws {
        let data = Data(value.utf8)
        var status = errSecItemNotFound
        // Update, else add. An app and its extension sharing the access group can both find no item and both add one:
        // the later add is errSecDuplicateItem, and the item is there now, so the update is tried again (and the add,
        // should the other process have deleted it meanwhile) — a few rounds, each of which only loses to another
        // writer.
        for _ in 0..<3 {
            status = perform { dataProtection in
                SecItemUpdate(
                    itemQuery(key, dataProtection: dataProtection) as CFDictionary,
                    attributes(data) as CFDictionary)
            }
            guard status == errSecItemNotFound else { break }
            status = perform { dataProtection in
                SecItemAdd(item(key, data, dataProtection: dataProtection) as CFDictionary, nil)
            }
            guard status == errSecDuplicateItem else { break }
        }
        guard status == errSecSuccess else { throw failure("write", key, status) }
    }

    /// Deletes the item for `key` (and one 1.0.0 left in macOS's file-based keychain, best effort); a missing item is
    /// not an error.
    ///
    /// - Parameter key: the storage key, such as `profirest-api:profirest-pos`.
    /// - Throws: ``StorageError`` (`.keychain`, with its status) when the keychain refuses the delete.
    public func remove(_ key: String) throws {
        let status = perform { SecItemDelete(itemQuery(key, dataProtection: $0) as CFDictionary) }
        guard status == errSecSuccess || status == errSecItemNotFound else { throw failure("delete", key, status) }
        if keychain == .dataProtection { _ = SecItemDelete(itemQuery(key, dataProtection: false) as CFDictionary) }
    }

    /// Runs one SecItem call against the keychain in use. When the data-protection keychain refuses this process for
    /// want of an entitlement and the file-based one may be used (macOS), the call is made there, and if that
    /// keychain answers it is used from then on.
    private func perform(_ call: (_ dataProtection: Bool) -> OSStatus) -> OSStatus {
        if keychain == .fileBased { return call(false) }
        let status = call(true)
        guard status == errSecMissingEntitlement, accessGroup == nil, allowsFileBasedKeychain,
              Self.hasFileBasedKeychain else { return status }
        let fallback = call(false)
        if fallback != errSecMissingEntitlement { inUse.withLock { $0 = .fileBased } }
        return fallback
    }

    /// Whether this system has a second keychain: macOS only. Elsewhere errSecMissingEntitlement passes (prewarmed
    /// launches), and a retry that happens to succeed must not be taken for another keychain.
    #if os(macOS)
    private static let hasFileBasedKeychain = true
    #elseif PROFIREST_SHIMS
    private static var hasFileBasedKeychain: Bool { InMemoryKeychain.shared.platform == .macOS }
    #else
    private static let hasFileBasedKeychain = false
    #endif

    private func copy(_ key: String, dataProtection: Bool, into data: inout Data?) -> OSStatus {
        var query = itemQuery(key, dataProtection: dataProtection)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        data = result as? Data
        return status
    }

    /// What `set` writes besides the key: the value, this device only, after the first unlock.
    private func attributes(_ data: Data) -> [String: Any] {
        [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
    }

    private func item(_ key: String, _ data: Data, dataProtection: Bool) -> [String: Any] {
        itemQuery(key, dataProtection: dataProtection).merging(attributes(data)) { _, new in new }
    }

    /// The item's identity, in one keychain. `kSecUseDataProtectionKeychain` is always said, either way: on macOS a
    /// query without it reaches both keychains — Security's `SecItemCategorizeQuery` (OSX/libsecurity_keychain/lib/
    /// SecItem.cpp) starts from "target both", and copy, update and delete then act on both — so a delete meant for the
    /// file-based item alone would remove the data-protection one too. Elsewhere the key is ignored: one keychain.
    private func itemQuery(_ key: String, dataProtection: Bool) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: key,
            kSecAttrSynchronizable as String: false,
        ]
        query[kSecUseDataProtectionKeychain as String] = dataProtection
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    private func location(_ key: String) -> String { "keychain \(service)/\(key)" }

    /// The OSStatus and the system's text for it; never the secret.
    private func failure(_ operation: String, _ key: String, _ status: OSStatus) -> StorageError {
        let message = SecCopyErrorMessageString(status, nil) as String? ?? "unknown error"
        let advice =
            status == errSecMissingEntitlement
            ? (accessGroup.map { "sign the app with the Keychain Sharing capability listing the access group \($0)" }
                ?? "sign the app with a keychain entitlement (Keychain Sharing), or allow the file-based keychain")
            : "check the app's keychain entitlements and that the device has been unlocked since boot"
        // Both answer now and not later: before the first unlock (a background launch, app prewarming), and at such
        // launches the entitlement check as well; the item is still there.
        let transient = status == errSecInteractionNotAllowed || status == errSecMissingEntitlement
        return StorageError(
            kind: .keychain, path: location(key),
            reason: "the keychain refused to \(operation) the item (OSStatus \(status): \(message)); \(advice)",
            isTransient: transient)
    }
}

#endif
