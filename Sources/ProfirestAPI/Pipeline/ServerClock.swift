import Foundation

/// The server's time as the `Date` headers of its answers tell it, so that what the server dates — a Retry-After
/// date, a staff session's `max_expires_at` — is measured against the server's own clock, not a device clock that
/// may be hours off (registers and terminals often are).
///
/// The offset is the server's time minus the device's at the moment an answer arrived; the latest answer with a
/// readable `Date` sets it. A `Date` has whole seconds and the answer travelled meanwhile, so the offset is good to
/// a second or two — plenty for waits and session ends, and far better than a wrong device clock.
final class ServerClock: Sendable {
    private struct State {
        var offset: TimeInterval?
        var reported = false
    }

    private let state = Locked(State())

    /// An offset larger than this is told to the observer, once.
    static let reportedOffset: TimeInterval = 60

    /// The latest measured offset (server minus device), nil before any answer with a readable `Date`.
    var offset: TimeInterval? { state.withLock { $0.offset } }

    /// Notes the `Date` of an answer that arrived at `deviceNow`. Returns the offset when it is the first one past
    /// `reportedOffset`, for the caller to report.
    func note(_ headers: [String: String], deviceNow: Date) -> TimeInterval? {
        guard let date = Self.date(in: headers, deviceNow: deviceNow) else { return nil }
        let offset = date.timeIntervalSince(deviceNow)
        return state.withLock { state -> TimeInterval? in
            state.offset = offset
            guard abs(offset) > Self.reportedOffset, !state.reported else { return nil }
            state.reported = true
            return offset
        }
    }

    /// The server's time of an answer: its `Date` header, read strictly as an HTTP date (IMF-fixdate or one of the
    /// two obsolete forms RFC 9110 §5.6.7 has recipients accept); nil when absent or unreadable.
    static func date(in headers: [String: String], deviceNow: Date) -> Date? {
        guard let value = HTTPHeaders.value("Date", in: headers) else { return nil }
        return RetryAfter.httpDate(value.trimmingCharacters(in: .whitespaces), now: deviceNow)
    }

    /// The device's time of a server's `date`: where the device's clock is when the server's shows `date`.
    func deviceTime(of date: Date) -> Date {
        date.addingTimeInterval(-(offset ?? 0))
    }
}
