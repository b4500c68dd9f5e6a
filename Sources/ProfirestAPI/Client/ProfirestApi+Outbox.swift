import Foundation

extension ProfirestApi {
    /// Opens the durable outbox journaled in the file at `path`, for writes that must happen once even when the
    /// network is down or the app is killed (see ``Outbox``).
    ///
    /// The file is readable by its owner only. Several processes may open the same file (each sees what the others
    /// handed in and settled); within a process, keep one outbox per file. `capacity` bounds the queue: a write
    /// beyond it is refused with `outbox_full`, never dropped. `onFailure` hears of writes sent later that the
    /// server refused for good.
    ///
    /// - Parameters:
    ///   - path: the journal file, readable by its owner only; it need not exist yet.
    ///   - capacity: how many writes may wait, 10 000 by default; a write beyond it is refused with `outbox_full`.
    ///   - onFailure: hears of writes sent later that the server refused for good; nil for nothing.
    /// - Returns: the outbox; start `run()` to deliver what waits.
    /// - Throws: ``StorageError`` when the journal cannot be locked (`.lockFailed`), read (`.unreadable`) or parsed
    ///   (`.corrupt`).
    ///
    /// ```swift
    /// let outbox = try api.outbox(path: "pichacka-outbox.json", onFailure: { failure in log(failure) })
    /// ```
    public func outbox(
        path: String, capacity: Int = 10_000, onFailure: (@Sendable (OutboxFailure) -> Void)? = nil
    ) throws -> Outbox {
        try Outbox(core: core, path: path, capacity: capacity, onFailure: onFailure)
    }
}
