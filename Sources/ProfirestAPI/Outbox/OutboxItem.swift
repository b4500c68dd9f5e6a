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
