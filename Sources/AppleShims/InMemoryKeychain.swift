#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The keychain behind the Security shims: one per process, shared by every caller like the device's keychain is
/// shared by an app's processes. Behaves as the SecItem documentation describes for generic passwords, and models the
/// two keychains of macOS (Apple's TN3137, "On Mac keychain APIs and implementations"):
/// - **Data protection** — the only keychain of iOS and the other platforms (`platform = .iOS`), and on macOS the one a
///   call reaches with `kSecUseDataProtectionKeychain` or `kSecAttrSynchronizable` set to true. It needs a keychain
///   entitlement: a process without one (`process.accessGroups == nil`, an unsigned tool) gets
///   `errSecMissingEntitlement`, and so does a call naming an access group the process is not entitled to
///   (errSecMissingEntitlement's page). An item is identified by class, service,
///   account, access group and synchronizable (errSecDuplicateItem's page); one added without an access group goes to
///   the process's first; one added without `kSecAttrAccessible` gets the documented default,
///   `kSecAttrAccessibleWhenUnlocked`. Queries see the groups the process is entitled to.
/// - **File-based** (macOS, `kSecUseDataProtectionKeychain` false): `kSecAttrAccessible` and `kSecAttrAccessGroup` do not apply
///   (kSecUseDataProtectionKeychain's page: use the data protection key for items "to which the kSecAttrAccessible or
///   kSecAttrAccessGroup attributes apply") — they are ignored, not stored. Each item has an access list naming the
///   program that created it by its code signature (`process.codeIdentity`); another program reading, changing or
///   deleting it makes macOS ask the user (the Access Control Lists page: "Otherwise, the system prompts the user …
///   Deny, Allow, or Always Allow"): counted in `prompts` and answered with `promptAnswer`. No entitlement is needed.
/// - **Both** (macOS, neither key): Security's `SecItemCategorizeQuery` starts from "target both" (see `targets`, which
///   cites the source): a copy, update or delete acts on both keychains and their answers are merged, an add goes to
///   the file-based one. So a delete meant for an old file-based item removes the data-protection copy as well.
/// Common to both: a query matches the items whose attributes equal every attribute it names (result, match and use
/// keys are not attributes); no match is `errSecItemNotFound`; `kSecValueData` must be `Data`; `kSecClass` is required
/// on add (`errSecParam`). Only what KeychainTokenStorage uses is implemented (one item returned as data).
/// Its items can be kept in a file that several processes share (`shareItems(in:)`), as an app and its extensions share
/// the device's keychain.
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
    private var injector: (@Sendable (String) -> OSStatus?)?
    private var hooks: [String: [() -> Void]] = [:]
    private var settings = (platform: Platform.iOS, process: Process.signedApp, answer: PromptAnswer.allow)
    private var promptCount = 0
    private var backingFile: String?

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

    /// Back to an iOS keychain used by a signed app, no prompts counted, no failure or hook pending, the items in this
    /// process's memory (they stay; a shared file's as the last call left them).
    /// Usage: `InMemoryKeychain.shared.reset()`
    public func reset() {
        lock.withLock {
            settings = (.iOS, .signedApp, .allow)
            promptCount = 0
            pendingFailure = nil
            injector = nil
            hooks = [:]
            backingFile = nil
        }
    }

    /// Every attribute of the data-protection keychain's items filed under `service` (a copy), for tests.
    public func items(service: String) -> [[String: Any]] {
        atomically { dataProtection.filter { Self.same($0[kSecAttrService], service) } }
    }

    /// Every attribute of the file-based keychain's items filed under `service` (a copy), for tests.
    public func fileBasedItems(service: String) -> [[String: Any]] {
        atomically { fileBased.map(\.item).filter { Self.same($0[kSecAttrService], service) } }
    }

    /// Files an item as-is in the data-protection keychain, bypassing validation — a corrupt item another app or an
    /// old version left behind.
    public func plant(_ item: [String: Any]) {
        atomically { dataProtection.append(item) }
    }

    /// Files an item in the file-based keychain as the program `creator` would have added it.
    public func plantInFileBasedKeychain(_ item: [String: Any], creator: String) {
        atomically { fileBased.append((Self.fileBasedForm(item), [creator])) }
    }

    /// Keeps the items in the file at `path` instead of this process's memory, so that processes started with the
    /// same path share them as an app and its extensions share the device's keychain (its daemon, securityd): each
    /// SecItem call reads the file, acts and writes it back while holding an exclusive `flock` on `<path>.lock`. So
    /// one call is atomic across the processes, as on a device, and no more than one is: another process's calls may
    /// come between two calls of this one. The settings (platform, process, prompts, failures, hooks) stay this
    /// process's. nil: this process's memory again, holding what the file held at the last call.
    /// Usage: `InMemoryKeychain.shared.shareItems(in: directory.file("keychain.json"))`
    public func shareItems(in path: String?) {
        lock.withLock { backingFile = path }
    }

    /// Runs one keychain operation under the lock and, when the items are shared through a file, under that file's
    /// lock, on the file's items, written back afterwards.
    private func atomically<T>(_ body: () -> T) -> T {
        lock.withLock {
            guard let path = backingFile else { return body() }
            let descriptor = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            precondition(descriptor >= 0, "the shared keychain's lock file \(path).lock cannot be opened")
            defer { close(descriptor) }  // which lets go of the flock too
            while flock(descriptor, LOCK_EX) != 0 {
                precondition(errno == EINTR, "the shared keychain's lock file \(path).lock cannot be locked")
            }
            load(path)
            let result = body()
            save(path)
            return result
        }
    }

    /// What one item's attributes hold: text (CFString here), flags and data.
    private enum StoredValue: Codable {
        case text(String), flag(Bool), bytes(Data)

        init?(_ value: Any) {
            switch value {
            case let text as String: self = .text(text)
            case let flag as Bool: self = .flag(flag)
            case let bytes as Data: self = .bytes(bytes)
            default: return nil
            }
        }

        var value: Any {
            switch self {
            case .text(let text): return text
            case .flag(let flag): return flag
            case .bytes(let bytes): return bytes
            }
        }
    }

    /// Both keychains as the shared file holds them.
    private struct Snapshot: Codable {
        var dataProtection: [[String: StoredValue]]
        var fileBased: [FileBasedItem]

        struct FileBasedItem: Codable {
            var item: [String: StoredValue]
            var trusted: [String]
        }
    }

    /// Replaces the items with the file's (none when it does not exist yet). Called under both locks.
    private func load(_ path: String) {
        guard let data = FileManager.default.contents(atPath: path) else {
            (dataProtection, fileBased) = ([], [])
            return
        }
        guard let snapshot = try? JSONDecoder().decode(Snapshot.self, from: data) else {
            preconditionFailure("the shared keychain's file \(path) is not one the in-memory keychain wrote")
        }
        dataProtection = snapshot.dataProtection.map { $0.mapValues(\.value) }
        fileBased = snapshot.fileBased.map { ($0.item.mapValues(\.value), Set($0.trusted)) }
    }

    /// Writes the items to the file, replacing it at once. Called under both locks.
    private func save(_ path: String) {
        let snapshot = Snapshot(
            dataProtection: dataProtection.map { $0.compactMapValues(StoredValue.init) },
            fileBased: fileBased.map { .init(item: $0.item.compactMapValues(StoredValue.init), trusted: $0.trusted.sorted()) })
        guard let data = try? JSONEncoder().encode(snapshot) else {
            preconditionFailure("the shared keychain's items cannot be encoded")
        }
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            preconditionFailure("the shared keychain's file \(path) cannot be written: \(error)")
        }
    }

    /// The next SecItem call returns `status` and changes nothing — e.g. `errSecInteractionNotAllowed`, what the
    /// real keychain answers before the first unlock.
    public func failNext(with status: OSStatus) {
        lock.withLock { pendingFailure = status }
    }

    /// Asks `decide` before every SecItem call from now on (until `reset()`) with the function's name
    /// ("SecItemAdd", "SecItemUpdate", "SecItemCopyMatching", "SecItemDelete"); a status it returns is that call's
    /// answer and nothing changes — the real refusals of a keychain at a chosen call: `errSecInteractionNotAllowed`
    /// (-25308, locked before the first unlock), `errSecMissingEntitlement` (-34018, seen at prewarmed launches),
    /// `errSecIO` (-36), `errSecNotAvailable` (-25291). Nil lets the call through.
    /// Usage: `keychain.injectFailures { $0 == "SecItemAdd" ? errSecIO : nil }`
    public func injectFailures(_ decide: @escaping @Sendable (String) -> OSStatus?) {
        lock.withLock { injector = decide }
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
        let (pending, decide) = lock.withLock {
            defer { pendingFailure = nil }
            return (pendingFailure, injector)
        }
        return pending ?? decide?(function)
    }

    /// Which keychains a call with these keys reaches, as Security's `SecItemCategorizeQuery` decides on macOS
    /// (apple-oss-distributions/Security, OSX/libsecurity_keychain/lib/SecItem.cpp, Security-61901): it starts from
    /// "target both", and only `kSecUseDataProtectionKeychain` (true: the data-protection keychain alone; false: the
    /// file-based one alone) or a synchronizable item (data protection alone) narrows that. On the other platforms there
    /// is one keychain and the key is ignored.
    private func targets(_ keys: [String: Any]) -> (dataProtection: Bool, fileBased: Bool) {
        if settings.platform == .iOS { return (true, false) }
        if let flag = keys[kSecUseDataProtectionKeychain] {
            let dataProtection = Self.same(flag, true)
            return (dataProtection, !dataProtection)
        }
        if Self.same(keys[kSecAttrSynchronizable], true) { return (true, false) }
        return (true, true)
    }

    /// The one answer of a call that reached both keychains, as Security's `SecItemMergeResults` (same file) gives it:
    /// the data-protection keychain's errSecMissingEntitlement is ignored (an unentitled program keeps using the
    /// file-based keychain), its other failures give the file-based keychain's answer, and its success wins over the
    /// file-based keychain's failure; both found: the data-protection keychain's item.
    private static func merged(
        _ dataProtection: (status: OSStatus, result: CFTypeRef?)?, _ fileBased: (status: OSStatus, result: CFTypeRef?)?
    ) -> (OSStatus, CFTypeRef?) {
        switch (dataProtection, fileBased) {
        case let (modern?, legacy?):
            if modern.status == errSecMissingEntitlement || modern.status != errSecSuccess { return legacy }
            return modern
        case let (modern?, nil): return modern
        case let (nil, legacy?): return legacy
        case (nil, nil): return (errSecParam, nil)
        }
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
        return atomically {
            var item = attributes.filter { !Self.notAttributes.contains($0.key) }
            if item[kSecAttrSynchronizable] == nil { item[kSecAttrSynchronizable] = false }
            // An add cannot go to both: Security prefers the file-based keychain whenever the call may reach it.
            if targets(attributes).fileBased {
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
        let wantsData = Self.same(query[kSecReturnData], true)
        return acrossKeychains(query) {
            guard let found = dataProtection.first(where: { entitled($0) && Self.matches($0, query) }) else {
                return (errSecItemNotFound, nil)
            }
            return (errSecSuccess, wantsData ? found[kSecValueData].map { $0 as AnyObject } : nil)
        } fileBased: {
            let fileQuery = Self.fileBasedForm(query)
            guard let index = fileBased.firstIndex(where: { Self.matches($0.item, fileQuery) }) else {
                return (errSecItemNotFound, nil)
            }
            if !wantsData { return (errSecSuccess, nil) }
            if let failure = passesAccessList(index) { return (failure, nil) }
            return (errSecSuccess, fileBased[index].item[kSecValueData].map { $0 as AnyObject })
        }
    }

    func update(_ query: [String: Any], _ attributesToUpdate: [String: Any]) -> OSStatus {
        if let failure = enter("SecItemUpdate") { return failure }
        if attributesToUpdate[kSecClass] != nil || attributesToUpdate.keys.contains(where: Self.notAttributes.contains) {
            return errSecParam
        }
        if let value = attributesToUpdate[kSecValueData], !(value is Data) { return errSecParam }
        return acrossKeychains(query) {
            var found = false
            for i in dataProtection.indices where entitled(dataProtection[i]) && Self.matches(dataProtection[i], query) {
                found = true
                dataProtection[i].merge(attributesToUpdate) { _, new in new }
            }
            return (found ? errSecSuccess : errSecItemNotFound, nil)
        } fileBased: {
            (updateFileBased(query, attributesToUpdate), nil)
        }.0
    }

    /// One call over the keychains `query` reaches (`targets`), under the lock (and the backing file's, when shared):
    /// the data-protection half after its entitlement check, the file-based half, and their answers merged as Security
    /// merges them.
    private func acrossKeychains(
        _ query: [String: Any], dataProtection modern: () -> (OSStatus, CFTypeRef?),
        fileBased legacy: () -> (OSStatus, CFTypeRef?)
    ) -> (OSStatus, CFTypeRef?) {
        atomically {
            let reach = targets(query)
            let dataProtectionAnswer = reach.dataProtection ? entitlementFailure(query).map { ($0, nil) } ?? modern() : nil
            let fileBasedAnswer = reach.fileBased ? legacy() : nil
            return Self.merged(dataProtectionAnswer, fileBasedAnswer)
        }
    }

    /// The file-based half of an update, under the lock.
    private func updateFileBased(_ query: [String: Any], _ attributesToUpdate: [String: Any]) -> OSStatus {
        let fileQuery = Self.fileBasedForm(query)
        var found = false
        for i in fileBased.indices where Self.matches(fileBased[i].item, fileQuery) {
            if let failure = passesAccessList(i) { return failure }
            found = true
            fileBased[i].item.merge(Self.fileBasedForm(attributesToUpdate)) { _, new in new }
        }
        return found ? errSecSuccess : errSecItemNotFound
    }

    func delete(_ query: [String: Any]) -> OSStatus {
        if let failure = enter("SecItemDelete") { return failure }
        return acrossKeychains(query) {
            let before = dataProtection.count
            dataProtection.removeAll { entitled($0) && Self.matches($0, query) }
            return (dataProtection.count == before ? errSecItemNotFound : errSecSuccess, nil)
        } fileBased: {
            (deleteFileBased(query), nil)
        }.0
    }

    /// The file-based half of a delete, under the lock.
    private func deleteFileBased(_ query: [String: Any]) -> OSStatus {
        let fileQuery = Self.fileBasedForm(query)
        let matching = fileBased.indices.filter { Self.matches(fileBased[$0].item, fileQuery) }
        guard !matching.isEmpty else { return errSecItemNotFound }
        for i in matching { if let failure = passesAccessList(i) { return failure } }
        fileBased.removeAll { Self.matches($0.item, fileQuery) }
        return errSecSuccess
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
