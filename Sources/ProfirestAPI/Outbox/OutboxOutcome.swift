import Foundation

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
