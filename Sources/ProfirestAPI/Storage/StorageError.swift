/// A token storage failure, with a message that says what to do about it.
///
/// Messages never contain stored values, since those are secrets.
///
/// ```swift
/// do { _ = try storage.get("refresh") } catch let e as StorageError { print(e) }
/// ```
public struct StorageError: Error, CustomStringConvertible, Sendable {
    /// The kinds of storage failure, so that an app can react to one differently — offer to reset a damaged file,
    /// say — instead of parsing the message.
    ///
    /// ```swift
    /// if error.kind == .corrupt { offerToPairAgain() }
    /// ```
    public enum Kind: Sendable, Hashable {
        /// The stored document cannot be parsed: the file was damaged or written by something else. Never read as
        /// "not paired", which would forget the pairing silently.
        case corrupt
        /// The storage exists but cannot be read, usually for its permissions.
        case unreadable
        /// A value could not be written (a full disk, a read-only folder, permissions that could not be set); nothing
        /// was changed.
        case unwritable
        /// The lock that keeps other processes out could not be taken.
        case lockFailed
        /// `withLock` was called again by the thread that already holds the lock, which would otherwise deadlock.
        case reentrantLock
        /// The system keychain refused the operation; the reason carries its status code.
        case keychain
    }

    /// The kind of failure, to decide by in code.
    public let kind: Kind
    /// The file (or keychain service) the failure concerns, so that the message can point a person at it.
    public let path: String
    /// What happened and what to do about it, for a person; never contains a stored value.
    public let reason: String
    /// Whether the same call is expected to succeed later without anything being changed, so that the app waits and
    /// tries again instead of asking the user to act: the keychain before the device's first unlock
    /// (`errSecInteractionNotAllowed`, -25308, at a background launch or app prewarming) or while its entitlement
    /// check is not yet answered (`errSecMissingEntitlement`, -34018, seen at such launches too). The stored state is
    /// still there; it is never a reason to pair again.
    ///
    /// ```swift
    /// if error.isTransient { scheduleRetryWhenProtectedDataBecomesAvailable() }
    /// ```
    public let isTransient: Bool

    /// Makes a storage error, for a ``TokenStorage`` of your own to report a failure the way the library's do.
    ///
    /// - Parameters:
    ///   - kind: the kind of failure, for code to decide by.
    ///   - path: the file, or the keychain service, the failure concerns.
    ///   - reason: what happened and what to do about it; never a stored value.
    ///   - isTransient: whether the same call should succeed later without anything being changed (see
    ///     ``isTransient``).
    ///
    /// ```swift
    /// throw StorageError(kind: .unwritable, path: path, reason: "the disk is full; free some space")
    /// ```
    public init(kind: Kind, path: String, reason: String, isTransient: Bool = false) {
        self.kind = kind
        self.path = path
        self.reason = reason
        self.isTransient = isTransient
    }

    /// The path and the reason in one line, `"<path>: <reason>"`, ready for a log or an alert.
    public var description: String { "\(path): \(reason)" }
}
