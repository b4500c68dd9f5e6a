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
        let outbox = try Outbox(core: core, path: path, capacity: capacity, onFailure: onFailure)
        outboxes.add(outbox)
        changes.notify()
        return outbox
    }

    /// Opens the outbox as ``outbox(path:capacity:onFailure:)`` does, with crash points in its journal: for the
    /// soak's kill trials, whose writer processes die inside an append or a compaction. An app never calls it; it is
    /// outside the public API (SPI `OutboxCrashTesting`), so an app cannot reach it by accident.
    ///
    /// - Parameters:
    ///   - path: the journal file, readable by its owner only; it need not exist yet.
    ///   - killPoint: where this process kills itself (SIGKILL): `append:N` half way through its N-th appended record,
    ///     `compaction:N` in its N-th compaction before the new file replaces the journal, `compacted:N` just after;
    ///     nil for nowhere.
    ///   - compactionBytes: compact once dead records exceed this many bytes (and the live ones) instead of 1 MiB;
    ///     nil for 1 MiB.
    /// - Returns: the outbox, with the default capacity and no `onFailure`.
    /// - Throws: ``StorageError`` as ``outbox(path:capacity:onFailure:)`` does.
    @_spi(OutboxCrashTesting)
    public func outbox(path: String, killPoint: String?, compactionBytes: Int?) throws -> Outbox {
        try Outbox(
            core: core, path: path, capacity: 10_000, onFailure: nil,
            hooks: OutboxJournal.TestHooks(killPoint: killPoint, compactionBytes: compactionBytes))
    }
}
