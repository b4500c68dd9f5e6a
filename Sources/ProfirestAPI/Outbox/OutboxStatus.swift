import Foundation

/// How the outbox is doing, for a status line or a health check.
///
/// ```swift
/// let status = outbox.status
/// label.text = status.count == 0 ? "" : "\(status.count) waiting since \(status.oldestEnqueuedAt!)"
/// ```
public struct OutboxStatus: Sendable, Hashable {
    /// How many writes wait to be sent.
    public let count: Int
    /// When the oldest waiting write was handed in; nil when nothing waits.
    public let oldestEnqueuedAt: Date?
    /// The failure that last kept writes waiting, to say why they wait; cleared by the next delivery.
    public let lastFailure: ProfirestAPIError?

    /// How long the oldest write has waited, for an alert when writes stay unsent too long; nil when nothing waits.
    ///
    /// - Parameter now: the time to measure to; the current time by default.
    /// - Returns: the seconds the oldest write has waited, or nil when nothing waits.
    ///
    /// ```swift
    /// if let age = status.oldestAge(), age > 3600 { warn("\(status.count) writes unsent for an hour") }
    /// ```
    public func oldestAge(now: Date = Date()) -> TimeInterval? { oldestEnqueuedAt.map { now.timeIntervalSince($0) } }
}
