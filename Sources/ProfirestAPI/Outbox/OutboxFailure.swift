import Foundation

/// A queued write the server refused for good (a 4xx other than the retryable ones): it has left the queue, and
/// the app decides what to tell a person.
///
/// ```swift
/// let outbox = try api.outbox(path: "outbox.json", onFailure: { failure in log(failure.item.id, failure.error.code) })
/// ```
public struct OutboxFailure: Sendable, CustomStringConvertible {
    /// The write that was refused, as it waited in the outbox.
    public let item: OutboxItem
    /// The server's refusal, whose `code` says why (a shared PIN's `staff_ambiguous`, a validation failure…).
    public let error: ProfirestAPIError

    /// The write and the refusal's code in one line for a log.
    public var description: String { "OutboxFailure(\(item.id) → \(item.path)): \(error.code)" }
}
