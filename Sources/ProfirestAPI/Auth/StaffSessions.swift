import Foundation

/// The employee session on a register, in memory only: the staff token is never written to any storage, so it
/// ends with the process as well as with inactivity.
///
/// The session ends `idle_timeout_seconds` after the last successful request and at `max_expires_at` at the latest,
/// both counted by the device clock. An ended session is noticed on the next `staffToken(now:)` (or a rejection
/// by the server), which drops it and calls `onStaffExpired` once. Signing out on purpose (`end`) does not call it.
final class StaffSessions: Sendable {
    private struct Session {
        let token: String
        let employee: StaffEmployee
        let restaurantID: String
        let idleTimeout: TimeInterval
        let maxExpiresAt: Date
        var idleDeadline: Date

        var expiresAt: Date { min(idleDeadline, maxExpiresAt) }

        var info: StaffInfo {
            StaffInfo(
                employeeID: employee.id, name: employee.name, role: employee.role, restaurantID: restaurantID,
                expiresAt: expiresAt)
        }
    }

    private let current = Locked<Session?>(nil)
    private let onStaffExpired: (@Sendable (StaffInfo) -> Void)?

    init(onStaffExpired: (@Sendable (StaffInfo) -> Void)? = nil) {
        self.onStaffExpired = onStaffExpired
    }

    /// Keeps the session returned by `POST /v2/restaurants/{id}/staff/sessions`; replaces any previous one.
    @discardableResult
    func begin(_ session: StaffSession, now: Date) -> StaffInfo {
        let idle = TimeInterval(max(1, session.idleTimeoutSeconds))
        let kept = Session(
            token: session.token, employee: session.employee, restaurantID: session.restaurantId, idleTimeout: idle,
            maxExpiresAt: session.maxExpiresAt, idleDeadline: now.addingTimeInterval(idle))
        current.withLock { $0 = kept }
        return kept.info
    }

    /// The token to send now, or nil when nobody is signed in or the session has ended (then dropped, and
    /// `onStaffExpired` called — once, since the session is gone afterwards).
    func staffToken(now: Date) -> String? {
        let (token, expired) = current.withLock { session -> (String?, StaffInfo?) in
            guard let s = session else { return (nil, nil) }
            if now >= s.expiresAt {
                session = nil
                return (nil, s.info)
            }
            return (s.token, nil)
        }
        if let expired { onStaffExpired?(expired) }
        return token
    }

    /// The signed-in employee, or nil (an ended session is dropped the same way as in `staffToken(now:)`).
    func info(now: Date) -> StaffInfo? {
        guard staffToken(now: now) != nil else { return nil }
        return current.withLock { $0?.info }
    }

    /// The session as kept, without expiring it or calling anything (for mirrors and diagnostics).
    var currentInfo: StaffInfo? { current.withLock { $0?.info } }

    /// A request with `token` succeeded: the idle timeout starts again. A request of an earlier session (signed
    /// out or replaced meanwhile) extends nothing, and neither does one after the maximum.
    func touch(token: String, now: Date) {
        current.withLock { session in
            guard var s = session, s.token == token, now < s.expiresAt else { return }
            s.idleDeadline = now.addingTimeInterval(s.idleTimeout)
            session = s
        }
    }

    /// The server no longer accepts `token` (`staff_session_expired`): drop that session and tell the app once.
    func rejected(token: String) {
        let expired = current.withLock { session -> StaffInfo? in
            guard let s = session, s.token == token else { return nil }
            session = nil
            return s.info
        }
        if let expired { onStaffExpired?(expired) }
    }

    /// Signs out the session of `token` locally, if it is the current one (a sign-out of an older token leaves a
    /// newer session alone). No `onStaffExpired`: signing out is on purpose.
    func end(token: String) {
        current.withLock { session in
            if session?.token == token { session = nil }
        }
    }

    /// Signs out locally and returns the token for the sign-out request (`DELETE /v2/staff/sessions/current`).
    @discardableResult
    func end() -> String? {
        current.withLock { session in
            defer { session = nil }
            return session?.token
        }
    }
}
