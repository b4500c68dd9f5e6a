/// Where the library keeps secrets that must outlive a request: pairing tokens, refresh tokens, PKCE state.
///
/// Synchronous on purpose: apps build authorization URLs synchronously, and every backend here is fast.
/// Implementations must be thread-safe.
///
/// ```swift
/// let storage: any TokenStorage = MemoryTokenStorage(); try storage.set("refresh", "r1")
/// ```
public protocol TokenStorage: Sendable {
    /// Reads the value stored under `key` — the library keeps one JSON document per connection there — or nil when
    /// there is none.
    ///
    /// Throw ``StorageError`` when the storage cannot be read: an unreadable storage must not look empty, or the
    /// connection would be forgotten silently.
    ///
    /// - Parameter key: the storage key, such as `profirest-api:profirest-pos`.
    /// - Returns: the stored value, or nil when there is none.
    /// - Throws: ``StorageError`` when the storage cannot be read (`.unreadable`, `.corrupt`, `.keychain`).
    func get(_ key: String) throws -> String?
    /// Stores `value` under `key`, replacing any previous value, so that the next `get` — in any process sharing the
    /// storage — sees it.
    ///
    /// - Parameters:
    ///   - key: the storage key, such as `profirest-api:profirest-pos`.
    ///   - value: the text to store.
    /// - Throws: ``StorageError`` when the value cannot be written (`.unwritable`, `.keychain`); nothing was changed
    ///   then.
    func set(_ key: String, _ value: String) throws
    /// Forgets `key`, for unpairing; removing a key that is not there is not an error.
    ///
    /// - Parameter key: the storage key, such as `profirest-api:profirest-pos`.
    /// - Throws: ``StorageError`` when the value cannot be removed.
    func remove(_ key: String) throws
}
