import Foundation

/// A write waiting in an ``Outbox``, as the app may see it: what it is and how it fares, never its body (a punch's
/// body carries a PIN).
///
/// ```swift
/// for item in outbox.items { print(item.path, item.attempts, item.lastErrorCode ?? "") }
/// ```
public struct OutboxItem: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// The kinds of write an outbox keeps, which are sent differently: a request alone, punches in batches.
    public enum Kind: String, Sendable, Hashable {
        /// A POST sent as it is, with its own Idempotency-Key.
        case request
        /// An attendance punch, sent in batches of at most 100 to `…/attendance/punches/batch`.
        case punch
    }

    /// The write's identity, which the server also knows it by: the punch's own id, or the request's
    /// Idempotency-Key.
    public let id: String
    /// Whether it is a request or a punch, which decides how it is sent.
    public let kind: Kind
    /// The path relative to `/v2` the write goes to.
    public let path: String
    /// When it was handed in, by the device's clock — how long a person's write has waited.
    public let enqueuedAt: Date
    /// How many times it was sent without a definitive answer.
    public let attempts: Int
    /// The code of its last failure, if any, to tell "no network" from "the server is down".
    public let lastErrorCode: String?

    /// The kind, id, path, attempts and last failure in one line for a log; never the body.
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
    /// The server recorded the write; the value is its answer (a punch's `AttendancePunch` as JSON), to decode
    /// with ``JSONValue/decode(as:decoder:)``.
    case delivered(JSONValue?)
    /// No definitive answer yet (no network, a 5xx, 429, …): the write stays in the journal and goes out later, so
    /// the app can tell the person it was saved.
    case queued(OutboxItem)
}

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
