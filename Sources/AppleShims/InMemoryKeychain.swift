import Foundation

/// The keychain behind the Security shims: one per process, shared by every caller like the device's keychain is
/// shared by an app's processes. Behaves as the SecItem documentation describes for generic passwords, and models the
/// two keychains of macOS (Apple's TN3137, "On Mac keychain APIs and implementations"):
/// - **Data protection** — the only keychain of iOS and the other platforms (`platform = .iOS`), and on macOS the one a
///   call reaches with `kSecUseDataProtectionKeychain` or `kSecAttrSynchronizable` set to true (TN3137: without them
///   SecItem targets the file-based keychain). It needs a keychain entitlement: a process without one (`process.
///   accessGroups == nil`, an unsigned tool) gets `errSecMissingEntitlement`, and so does a call naming an access
///   group the process is not entitled to (errSecMissingEntitlement's page). An item is identified by class, service,
///   account, access group and synchronizable (errSecDuplicateItem's page); one added without an access group goes to
///   the process's first; one added without `kSecAttrAccessible` gets the documented default,
///   `kSecAttrAccessibleWhenUnlocked`. Queries see the groups the process is entitled to.
/// - **File-based** (macOS without those keys): `kSecAttrAccessible` and `kSecAttrAccessGroup` do not apply
///   (kSecUseDataProtectionKeychain's page: use the data protection key for items "to which the kSecAttrAccessible or
///   kSecAttrAccessGroup attributes apply") — they are ignored, not stored. Each item has an access list naming the
///   program that created it by its code signature (`process.codeIdentity`); another program reading, changing or
///   deleting it makes macOS ask the user (the Access Control Lists page: "Otherwise, the system prompts the user …
///   Deny, Allow, or Always Allow"): counted in `prompts` and answered with `promptAnswer`. No entitlement is needed.
/// Common to both: a query matches the items whose attributes equal every attribute it names (result, match and use
/// keys are not attributes); no match is `errSecItemNotFound`; `kSecValueData` must be `Data`; `kSecClass` is required
/// on add (`errSecParam`). Only what KeychainTokenStorage uses is implemented (one item returned as data).
public final class InMemoryKeychain: @unchecked Sendable {
    /// The process's keychain. Usage: `InMemoryKeychain.shared.items(service: "s")`
    public static let shared = InMemoryKeychain()

    /// Which platform's keychain to behave as. Usage: `InMemoryKeychain.shared.platform = .macOS`
    public enum Platform: Sendable {
        /// iOS, iPadOS, tvOS, watchOS, visionOS: the data-protection keychain only; kSecUseDataProtectionKeychain
        /// is ignored.
        case iOS
        /// macOS: the data-protection and the file-based keychain.
        case macOS
    }

    /// The process making the calls, as the keychain sees it.
    /// Usage: `InMemoryKeychain.shared.process = .init(accessGroups: nil, codeIdentity: "cdhash-1")`
    public struct Process: Sendable {
        /// The keychain access groups it is entitled to, its default first (keychain-access-groups, the application
        /// identifier, app groups); `["*"]` stands for any group a test names; nil for no keychain entitlement.
        public var accessGroups: [String]?
        /// What the file-based keychain's access lists know it by: its code signature (an unsigned build's changes with
        /// every build).
        public var codeIdentity: String

        /// Usage: `.init(accessGroups: ["TEAMID.app"], codeIdentity: "TEAMID.app")`
        public init(accessGroups: [String]?, codeIdentity: String) {
            self.accessGroups = accessGroups
            self.codeIdentity = codeIdentity
        }

        /// A signed app entitled to any access group the tests name; its default group is "SHIMTEAM.default".
        public static let signedApp = Process(accessGroups: ["SHIMTEAM.default", "*"], codeIdentity: "SHIMTEAM.app")
    }

    /// The user's answer to a file-based keychain prompt. Usage: `InMemoryKeychain.shared.promptAnswer = .deny`
    public enum PromptAnswer: Sendable {
        /// Allow this once.
        case allow
        /// Allow and add the program to the item's access list, so it is not asked again.
        case alwaysAllow
        /// Deny: the call fails with errSecAuthFailed.
        case deny
    }

    private let lock = NSLock()
    private var dataProtection: [[String: Any]] = []
    private var fileBased: [(item: [String: Any], trusted: Set<String>)] = []
    private var pendingFailure: OSStatus?
    private var hooks: [String: [() -> Void]] = [:]
    private var settings = (platform: Platform.iOS, process: Process.signedApp, answer: PromptAnswer.allow)
    private var promptCount = 0

    private static let identity = [kSecClass, kSecAttrService, kSecAttrAccount, kSecAttrAccessGroup, kSecAttrSynchronizable]
    /// Keys of a query that are not item attributes.
    private static let notAttributes: Set<String> = [kSecReturnData, kSecMatchLimit, kSecUseDataProtectionKeychain]

    /// Usage: `InMemoryKeychain.shared.platform = .macOS`
    public var platform: Platform {
        get { lock.withLock { settings.platform } }
        set { lock.withLock { settings.platform = newValue } }
    }

    /// Usage: `InMemoryKeychain.shared.process = .signedApp`
    public var process: Process {
        get { lock.withLock { settings.process } }
        set { lock.withLock { settings.process = newValue } }
    }

    /// Usage: `InMemoryKeychain.shared.promptAnswer = .alwaysAllow`
    public var promptAnswer: PromptAnswer {
        get { lock.withLock { settings.answer } }
        set { lock.withLock { settings.answer = newValue } }
    }

    /// How many times a file-based keychain item made macOS ask the user. Usage: `XCTAssertEqual(keychain.prompts, 1)`
    public var prompts: Int { lock.withLock { promptCount } }

    /// Back to an iOS keychain used by a signed app, no prompts counted, no failure or hook pending (items stay).
    /// Usage: `InMemoryKeychain.shared.reset()`
    public func reset() {
        lock.withLock {
            settings = (.iOS, .signedApp, .allow)
            promptCount = 0
            pendingFailure = nil
            hooks = [:]
        }
    }

    /// Every attribute of the data-protection keychain's items filed under `service` (a copy), for tests.
    public func items(service: String) -> [[String: Any]] {
        lock.withLock { dataProtection.filter { Self.same($0[kSecAttrService], service) } }
    }

    /// Every attribute of the file-based keychain's items filed under `service` (a copy), for tests.
    public func fileBasedItems(service: String) -> [[String: Any]] {
        lock.withLock { fileBased.map(\.item).filter { Self.same($0[kSecAttrService], service) } }
    }

    /// Files an item as-is in the data-protection keychain, bypassing validation — a corrupt item another app or an
    /// old version left behind.
    public func plant(_ item: [String: Any]) {
        lock.withLock { dataProtection.append(item) }
    }

    /// Files an item in the file-based keychain as the program `creator` would have added it.
    public func plantInFileBasedKeychain(_ item: [String: Any], creator: String) {
        lock.withLock { fileBased.append((Self.fileBasedForm(item), [creator])) }
    }

    /// The next SecItem call returns `status` and changes nothing — e.g. `errSecInteractionNotAllowed`, what the
    /// real keychain answers before the first unlock.
    public func failNext(with status: OSStatus) {
        lock.withLock { pendingFailure = status }
    }

    /// Runs `action` just before the next call of `function` ("SecItemAdd", "SecItemUpdate", "SecItemCopyMatching",
    /// "SecItemDelete") does anything — another process (an app extension) acting in between two calls of this one.
    public func beforeNext(_ function: String, _ action: @escaping () -> Void) {
        lock.withLock { hooks[function, default: []].append(action) }
    }

    private func enter(_ function: String) -> OSStatus? {
        let hook: (() -> Void)? = lock.withLock {
            guard var waiting = hooks[function], !waiting.isEmpty else { return nil }
            let first = waiting.removeFirst()
            hooks[function] = waiting
            return first
        }
        hook?()
        return lock.withLock {
            defer { pendingFailure = nil }
            return pendingFailure
        }
    }

    /// Whether a call with these keys reaches the data-protection keychain (TN3137).
    private func reachesDataProtection(_ keys: [String: Any]) -> Bool {
        settings.platform == .iOS || Self.same(keys[kSecUseDataProtectionKeychain], true)
            || Self.same(keys[kSecAttrSynchronizable], true)
    }

    /// For the data-protection keychain: errSecMissingEntitlement when the process may not use it or the group named.
    private func entitlementFailure(_ keys: [String: Any]) -> OSStatus? {
        guard let groups = settings.process.accessGroups else { return errSecMissingEntitlement }
        if let group = keys[kSecAttrAccessGroup] as? String, !groups.contains("*"), !groups.contains(group) {
            return errSecMissingEntitlement
        }
        return nil
    }

    private func entitled(_ item: [String: Any]) -> Bool {
        guard let groups = settings.process.accessGroups else { return false }
        return groups.contains("*") || groups.contains { Self.same(item[kSecAttrAccessGroup], $0) }
    }

    /// The file-based keychain's access list: nil when the process may go on (after a prompt, maybe), else the
    /// failure. Called under the lock.
    private func passesAccessList(_ index: Int) -> OSStatus? {
        let identity = settings.process.codeIdentity
        if fileBased[index].trusted.contains(identity) { return nil }
        promptCount += 1
        switch settings.answer {
        case .allow: return nil
        case .alwaysAllow:
            fileBased[index].trusted.insert(identity)
            return nil
        case .deny: return errSecAuthFailed
        }
    }

    private static func fileBasedForm(_ item: [String: Any]) -> [String: Any] {
        item.filter { $0.key != kSecAttrAccessGroup && $0.key != kSecAttrAccessible }
    }

    func add(_ attributes: [String: Any]) -> OSStatus {
        if let failure = enter("SecItemAdd") { return failure }
        guard attributes[kSecClass] != nil else { return errSecParam }
        if let value = attributes[kSecValueData], !(value is Data) { return errSecParam }
        return lock.withLock {
            var item = attributes.filter { !Self.notAttributes.contains($0.key) }
            if item[kSecAttrSynchronizable] == nil { item[kSecAttrSynchronizable] = false }
            guard reachesDataProtection(attributes) else {
                item = Self.fileBasedForm(item)
                if fileBased.contains(where: { Self.sameIdentity($0.item, item) }) { return errSecDuplicateItem }
                fileBased.append((item, [settings.process.codeIdentity]))
                return errSecSuccess
            }
            if let failure = entitlementFailure(attributes) { return failure }
            if item[kSecAttrAccessGroup] == nil { item[kSecAttrAccessGroup] = settings.process.accessGroups?.first }
            if item[kSecAttrAccessible] == nil { item[kSecAttrAccessible] = kSecAttrAccessibleWhenUnlocked }
            if dataProtection.contains(where: { Self.sameIdentity($0, item) }) { return errSecDuplicateItem }
            dataProtection.append(item)
            return errSecSuccess
        }
    }

    func copyMatching(_ query: [String: Any]) -> (OSStatus, CFTypeRef?) {
        if let failure = enter("SecItemCopyMatching") { return (failure, nil) }
        return lock.withLock { () -> (OSStatus, CFTypeRef?) in
            let item: [String: Any]
            if reachesDataProtection(query) {
                if let failure = entitlementFailure(query) { return (failure, nil) }
                guard let found = dataProtection.first(where: { entitled($0) && Self.matches($0, query) }) else {
                    return (errSecItemNotFound, nil)
                }
                item = found
            } else {
                let fileQuery = Self.fileBasedForm(query)
                guard let index = fileBased.firstIndex(where: { Self.matches($0.item, fileQuery) }) else {
                    return (errSecItemNotFound, nil)
                }
                guard Self.same(query[kSecReturnData], true) else { return (errSecSuccess, nil) }
                if let failure = passesAccessList(index) { return (failure, nil) }
                item = fileBased[index].item
            }
            guard Self.same(query[kSecReturnData], true) else { return (errSecSuccess, nil) }
            return (errSecSuccess, item[kSecValueData].map { $0 as AnyObject })
        }
    }

    func update(_ query: [String: Any], _ attributesToUpdate: [String: Any]) -> OSStatus {
        if let failure = enter("SecItemUpdate") { return failure }
        if attributesToUpdate[kSecClass] != nil || attributesToUpdate.keys.contains(where: Self.notAttributes.contains) {
            return errSecParam
        }
        if let value = attributesToUpdate[kSecValueData], !(value is Data) { return errSecParam }
        return lock.withLock {
            var found = false
            if reachesDataProtection(query) {
                if let failure = entitlementFailure(query) { return failure }
                for i in dataProtection.indices where entitled(dataProtection[i]) && Self.matches(dataProtection[i], query) {
                    found = true
                    dataProtection[i].merge(attributesToUpdate) { _, new in new }
                }
            } else {
                let fileQuery = Self.fileBasedForm(query)
                for i in fileBased.indices where Self.matches(fileBased[i].item, fileQuery) {
                    if let failure = passesAccessList(i) { return failure }
                    found = true
                    fileBased[i].item.merge(Self.fileBasedForm(attributesToUpdate)) { _, new in new }
                }
            }
            return found ? errSecSuccess : errSecItemNotFound
        }
    }

    func delete(_ query: [String: Any]) -> OSStatus {
        if let failure = enter("SecItemDelete") { return failure }
        return lock.withLock {
            if reachesDataProtection(query) {
                if let failure = entitlementFailure(query) { return failure }
                let before = dataProtection.count
                dataProtection.removeAll { entitled($0) && Self.matches($0, query) }
                return dataProtection.count == before ? errSecItemNotFound : errSecSuccess
            }
            let fileQuery = Self.fileBasedForm(query)
            let matching = fileBased.indices.filter { Self.matches(fileBased[$0].item, fileQuery) }
            guard !matching.isEmpty else { return errSecItemNotFound }
            for i in matching { if let failure = passesAccessList(i) { return failure } }
            fileBased.removeAll { Self.matches($0.item, fileQuery) }
            return errSecSuccess
        }
    }

    private static func matches(_ item: [String: Any], _ query: [String: Any]) -> Bool {
        query.allSatisfy { key, value in notAttributes.contains(key) || same(item[key], value) }
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
