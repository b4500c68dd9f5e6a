import Foundation

/// A write waiting in an ``Outbox``, as the app may see it: what it is and how it fares, never its body (a punch's
/// body carries a PIN).
///
/// ```swift
/// for item in outbox.items { print(item.path, item.attempts, item.lastErrorCode ?? "") }
/// ```
public struct OutboxItem: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// What kind of write it is.
    public enum Kind: String, Sendable, Hashable {
        /// A POST sent as it is, with its own Idempotency-Key. Usage: `item.kind == .request`
        case request
        /// An attendance punch, sent in batches of at most 100 to `…/attendance/punches/batch`.
        /// Usage: `item.kind == .punch`
        case punch
    }

    /// The item's id: the punch's own id, or the request's Idempotency-Key. Usage: `item.id`
    public let id: String
    /// A request or a punch. Usage: `item.kind`
    public let kind: Kind
    /// The path relative to `/v2` the write goes to. Usage: `item.path`
    public let path: String
    /// When it was queued (the device clock). Usage: `item.enqueuedAt`
    public let enqueuedAt: Date
    /// How many times it was sent without a definitive answer. Usage: `item.attempts`
    public let attempts: Int
    /// The code of its last failure, if any. Usage: `item.lastErrorCode`
    public let lastErrorCode: String?

    /// Usage: `print(item)`
    public var description: String {
        "OutboxItem(\(kind.rawValue) \(id) → \(path), attempts: \(attempts)\(lastErrorCode.map { ", last: \($0)" } ?? ""))"
    }
}

/// What became of a write handed to the outbox: delivered now, or kept to be sent later.
///
/// ```swift
/// switch try await outbox.punch(restaurantID: rid, punch) {
/// case .delivered(let answer): show(try answer?.decode(as: AttendancePunch.self))
/// case .queued: show("saved offline")
/// }
/// ```
public enum OutboxOutcome: Sendable, Hashable {
    /// The server recorded it; the value is its answer (a punch's `AttendancePunch` as JSON).
    /// Usage: `case .delivered(let answer):`
    case delivered(JSONValue?)
    /// No definitive answer yet (no network, a 5xx, 429, …): it stays in the journal and goes out later.
    /// Usage: `case .queued(let item):`
    case queued(OutboxItem)
}

/// A queued write the server refused for good (a 4xx other than the retryable ones): it has left the queue, and
/// the app decides what to tell a person.
///
/// ```swift
/// let outbox = try api.outbox(path: "outbox.json", onFailure: { failure in log(failure.item.id, failure.error.code) })
/// ```
public struct OutboxFailure: Error, Sendable, CustomStringConvertible {
    /// The write that failed. Usage: `failure.item.path`
    public let item: OutboxItem
    /// The server's answer for it. Usage: `failure.error.code`
    public let error: ProfirestAPIError

    /// Usage: `print(failure)`
    public var description: String { "OutboxFailure(\(item.id) → \(item.path)): \(error.code)" }
}

/// How the outbox is doing, for a status line or a health check.
///
/// ```swift
/// let status = outbox.status
/// label.text = status.count == 0 ? "" : "\(status.count) waiting since \(status.oldestEnqueuedAt!)"
/// ```
public struct OutboxStatus: Sendable, Hashable {
    /// How many writes wait. Usage: `status.count`
    public let count: Int
    /// When the oldest waiting write was queued. Usage: `status.oldestEnqueuedAt`
    public let oldestEnqueuedAt: Date?
    /// The last failure that kept writes waiting (cleared by the next delivery). Usage: `status.lastFailure?.code`
    public let lastFailure: ProfirestAPIError?

    /// How long the oldest write has waited. Usage: `status.oldestAge(now: Date())`
    public func oldestAge(now: Date = Date()) -> TimeInterval? { oldestEnqueuedAt.map { now.timeIntervalSince($0) } }
}
