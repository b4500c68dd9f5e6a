// Test-only declaration shim of the one Foundation method Darwin has and swift-corelibs-foundation lacks that the
// library's Apple files call: FileManager's app-group container (KeychainTokenStorage's lock file), so that file is
// type-checked and its lock run on Linux (target PlatformShims). Never part of the ProfirestAPI library or any product.
import Foundation

/// Where the shim's app-group containers are: one directory per group under `root`, as an app and its extensions
/// find one shared directory per group they are entitled to.
/// Usage: `AppGroupContainers.shared.root = URL(fileURLWithPath: "/tmp/groups")`
public final class AppGroupContainers: @unchecked Sendable {
    /// The process's containers. Usage: `AppGroupContainers.shared.entitled = ["group.cz.example"]`
    public static let shared = AppGroupContainers()

    private let lock = NSLock()
    private var settings: (root: URL?, entitled: Set<String>?) = (nil, nil)

    /// The directory the groups' containers are made in; nil (the default): no group has a container.
    public var root: URL? {
        get { lock.withLock { settings.root } }
        set { lock.withLock { settings.root = newValue } }
    }

    /// The groups the process is entitled to (its `com.apple.security.application-groups`); nil: any group it names.
    public var entitled: Set<String>? {
        get { lock.withLock { settings.entitled } }
        set { lock.withLock { settings.entitled = newValue } }
    }

    /// No root and every group entitled again. Usage: `AppGroupContainers.shared.reset()`
    public func reset() {
        lock.withLock { settings = (nil, nil) }
    }

    /// The group's container, created when missing, or nil as iOS answers for a group the process is not entitled to.
    func container(_ group: String) -> URL? {
        let (root, entitled) = lock.withLock { (settings.root, settings.entitled) }
        guard let root, !group.isEmpty, entitled?.contains(group) ?? true else { return nil }
        let url = root.appendingPathComponent(group, isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

extension FileManager {
    /// https://developer.apple.com/documentation/foundation/filemanager/containerurl(forsecurityapplicationgroupidentifier:)
    /// — `func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL?` (iOS 7, macOS
    /// 10.8, tvOS 9, watchOS 2; confirmed). "In iOS, the value is nil when the group identifier is invalid. In macOS,
    /// a URL of the expected form is always returned, even if the app group is invalid": the shim answers as iOS does
    /// (nil outside `AppGroupContainers.entitled`), and the directory it returns exists (on macOS it may not yet:
    /// the library creates it).
    public func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? {
        AppGroupContainers.shared.container(groupIdentifier)
    }
}
