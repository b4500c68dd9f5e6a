/// A token storage failure, with a message that says what to do about it.
///
/// Messages never contain stored values, since those are secrets.
///
/// ```swift
/// do { _ = try storage.get("refresh") } catch let e as StorageError { print(e) }
/// ```
public struct StorageError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, for code that reacts differently (e.g. offers to reset a corrupt file).
    /// Usage: `if error.kind == .corrupt { … }`
    public enum Kind: Sendable, Hashable {
        /// The stored data cannot be parsed. Usage: `case .corrupt:`
        case corrupt
        /// The storage exists but cannot be read. Usage: `case .unreadable:`
        case unreadable
        /// A value could not be written. Usage: `case .unwritable:`
        case unwritable
        /// The cross-process lock could not be taken. Usage: `case .lockFailed:`
        case lockFailed
        /// `withLock` was called again by the thread that holds the lock. Usage: `case .reentrantLock:`
        case reentrantLock
        /// The system keychain refused the operation. Usage: `case .keychain:`
        case keychain
    }

    /// What went wrong. Usage: `error.kind`
    public let kind: Kind
    /// The file (or keychain service) concerned. Usage: `error.path`
    public let path: String
    /// What happened and what to do. Usage: `error.reason`
    public let reason: String

    /// Usage: `throw StorageError(kind: .unwritable, path: p, reason: "the disk is full; free some space")`
    public init(kind: Kind, path: String, reason: String) {
        self.kind = kind
        self.path = path
        self.reason = reason
    }

    /// `"<path>: <reason>"`. Usage: `print(error)`
    public var description: String { "\(path): \(reason)" }
}
