import Foundation

/// The employee session on a register, in memory only: the staff token is never written to any storage, so it
/// ends with the process as well as with inactivity.
///
/// The session ends `idle_timeout_seconds` after the last successful request and at `max_expires_at` at the latest,
/// both counted by the client's clock. A timer on that clock (`StaffExpiryTimer`, waiting with the client's `sleep`)
/// drops the session at its end and calls `onStaffExpired` then, so an idle register learns it without a request;
/// the next `staffToken(now:)` or a rejection by the server drops it when they notice first. Whichever drops the
/// session reports it, so `onStaffExpired` is called once per session. Signing out on purpose (`end`) and a new
/// sign-in replacing the session stop its timer and call nothing.
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

    private struct State {
        var session: Session?
        /// The timer watching `session`, cancelled whenever the session goes: it would find nothing to report, but
        /// a real sleep of hours should not outlive its session.
        var timer: Task<Void, Never>?
    }

    private let state = Locked(State())
    private let expiryTimer: StaffExpiryTimer
    private let onStaffExpired: (@Sendable (StaffInfo) -> Void)?
    /// Told when a session begins, is extended or ends (the client's state changed).
    private let changes: ChangeSignal

    /// `clock` and `sleep` are the client's: the timer waits for a session's end with them.
    init(
        clock: @escaping @Sendable () -> Date, sleep: @escaping @Sendable (TimeInterval) async throws -> Void,
        onStaffExpired: (@Sendable (StaffInfo) -> Void)? = nil, changes: ChangeSignal = ChangeSignal()
    ) {
        expiryTimer = StaffExpiryTimer(clock: clock, sleep: sleep)
        self.onStaffExpired = onStaffExpired
        self.changes = changes
    }

    deinit {
        // The timer holds us weakly; this ends its sleep now instead of at the session's end.
        state.withLock { $0.timer }?.cancel()
    }

    /// Keeps the session returned by `POST /v2/restaurants/{id}/staff/sessions` and starts its timer; replaces any
    /// previous one without reporting it (the employee changed, nobody's session ran out).
    ///
    /// `serverOffset` is the server's time minus the device's (`ServerClock`): `max_expires_at` is a time of the
    /// server's clock, so the session lasts as long as the server says is left, whatever the device's clock shows.
    @discardableResult
    func begin(_ session: StaffSession, now: Date, serverOffset: TimeInterval = 0) -> StaffInfo {
        let idle = TimeInterval(max(1, session.idleTimeoutSeconds))
        let kept = Session(
            token: session.token, employee: session.employee, restaurantID: session.restaurantId, idleTimeout: idle,
            maxExpiresAt: session.maxExpiresAt.addingTimeInterval(-serverOffset), idleDeadline: now.addingTimeInterval(idle))
        let replaced = state.withLock { state -> Task<Void, Never>? in
            defer { state = State(session: kept, timer: nil) }
            return state.timer
        }
        // Replaced is not expired: the previous session's timer stops without reporting.
        replaced?.cancel()
        arm(token: kept.token)
        changes.notify()
        return kept.info
    }

    /// Starts the timer of the session of `token` and keeps it with the session. Outside the lock, so the session
    /// may have gone meanwhile: then the new timer is not needed.
    private func arm(token: String) {
        let started = expiryTimer.start(token: token, in: self)
        let obsolete = state.withLock { state -> Task<Void, Never>? in
            guard state.session?.token == token else { return started }
            defer { state.timer = started }
            return state.timer
        }
        obsolete?.cancel()
    }

    /// The token to send now, or nil when nobody is signed in or the session has ended (then dropped, and
    /// `onStaffExpired` called — once, since the session is gone afterwards).
    func staffToken(now: Date) -> String? {
        let (token, ended) = state.withLock { state -> (String?, Ended?) in
            guard let s = state.session else { return (nil, nil) }
            guard now >= s.expiresAt else { return (s.token, nil) }
            return (nil, Self.drop(&state))
        }
        report(ended)
        return token
    }

    /// The signed-in employee, or nil (an ended session is dropped the same way as in `staffToken(now:)`).
    func info(now: Date) -> StaffInfo? {
        guard staffToken(now: now) != nil else { return nil }
        return state.withLock { $0.session?.info }
    }

    /// The session as kept, without expiring it or calling anything (for mirrors and diagnostics).
    var currentInfo: StaffInfo? { state.withLock { $0.session?.info } }

    /// A request with `token` succeeded: the idle timeout starts again. A request of an earlier session (signed
    /// out or replaced meanwhile) extends nothing, and neither does one after the maximum. Only the deadline moves,
    /// under the lock (this runs after every request): the timer finds the new one when it wakes.
    func touch(token: String, now: Date) {
        let extended = state.withLock { state -> Bool in
            guard var s = state.session, s.token == token, now < s.expiresAt else { return false }
            s.idleDeadline = now.addingTimeInterval(s.idleTimeout)
            state.session = s
            return true
        }
        if extended { changes.notify() }
    }

    /// For the timer of `token`'s session: drops the session and reports it if its end has come. Returns the time
    /// left until the end, or nil when there is nothing more to wait for (ended now, or already gone).
    func expireIfDue(token: String, now: Date) -> TimeInterval? {
        var ended: Ended?
        let left = state.withLock { state -> TimeInterval? in
            guard let s = state.session, s.token == token else { return nil }
            let left = s.expiresAt.timeIntervalSince(now)
            if left > 0 { return left }
            ended = Self.drop(&state)
            return nil
        }
        report(ended)
        return left
    }

    /// The server no longer accepts `token` (`staff_session_expired`): drop that session and tell the app once.
    func rejected(token: String) {
        let ended = state.withLock { state -> Ended? in
            guard state.session?.token == token else { return nil }
            return Self.drop(&state)
        }
        report(ended)
    }

    /// Signs out the session of `token` locally, if it is the current one (a sign-out of an older token leaves a
    /// newer session alone). No `onStaffExpired`: signing out is on purpose.
    func end(token: String) {
        let ended = state.withLock { state -> Ended? in
            state.session?.token == token ? Self.drop(&state) : nil
        }
        ended?.timer?.cancel()
        if ended != nil { changes.notify() }
    }

    /// Signs out locally and returns the token for the sign-out request (`DELETE /v2/staff/sessions/current`).
    @discardableResult
    func end() -> String? {
        let ended = state.withLock { Self.drop(&$0) }
        ended?.timer?.cancel()
        if ended != nil { changes.notify() }
        return ended?.token
    }

    // MARK: Dropping a session

    /// What is left to do after a session was dropped under the lock: tell the app, stop the timer.
    private struct Ended {
        let token: String
        let info: StaffInfo
        let timer: Task<Void, Never>?
    }

    /// Forgets the session under the lock. Only the one caller that gets it back acts on it (reports it, or not for
    /// a sign-out), so nothing is reported twice for a session.
    private static func drop(_ state: inout State) -> Ended? {
        guard let s = state.session else { return nil }
        defer { state = State() }
        return Ended(token: s.token, info: s.info, timer: state.timer)
    }

    /// Calls `onStaffExpired` outside the lock (the app may read `api.staff` in it) and stops the timer; when the
    /// timer itself reports, cancelling its own task is harmless, it ends right after.
    private func report(_ ended: Ended?) {
        guard let ended else { return }
        ended.timer?.cancel()
        changes.notify()
        onStaffExpired?(ended.info)
    }
}

extension StaffSessions: CustomReflectable {
    var customMirror: Mirror { Mirror(self, children: ["staff": currentInfo as Any]) }
}
