import Foundation

// The employee signed in on a register: the staff token stays in memory (`StaffSessions`), goes out as
// Profirest-Staff-Token with `staff: .auto` / `.required`, and ends with inactivity (reported on time by a timer on
// the client's clock).

extension ProfirestApi {
    /// Signs an employee in with a PIN or a card (`POST /v2/restaurants/{id}/staff/sessions`); later requests
    /// carry their token. A shared PIN throws `staff_ambiguous` with `candidates`: set `employeeId` and call again.
    ///
    /// - Parameters:
    ///   - restaurantID: the restaurant the employee works in.
    ///   - credential: the PIN or card, and `employeeId` when a shared PIN was ambiguous.
    /// - Returns: the session: who signed in, their role, and when it ends.
    /// - Throws: ``ProfirestAPIError`` when the sign-in fails — decide by its `code` (`staff_credentials_invalid`,
    ///   `staff_ambiguous` with ``ProfirestAPIError/candidates``, `staff_locked` with ``ProfirestAPIError/retryAfter``,
    ///   `not_paired`, `network_error`…); ``ProfirestUsageError`` when the call is wrong and nothing was sent;
    ///   ``StorageError`` when the stored state cannot be read or written; `CancellationError` when the task is
    ///   cancelled.
    ///
    /// ```swift
    /// try await api.signInStaff(restaurantID: rid, credential: StaffCredential(method: "pin", secret: pin))
    /// ```
    @discardableResult
    public func signInStaff(restaurantID: String, credential: StaffCredential) async throws -> StaffSession {
        // staff: .none — a sign-in must not carry the previous employee's token.
        let session: StaffSession = try await post(
            "/restaurants/\(restaurantID)/staff/sessions", body: credential, options: .init(staff: .none))
        identity.staffSignedIn(session, core: core)
        return session
    }

    /// Signs the employee out: forgets the session here at once, then tells the server
    /// (`DELETE /v2/staff/sessions/current`), best effort. With `token`, signs out that session instead.
    ///
    /// - Parameter token: the token of the session to end; nil ends the one signed in now.
    ///
    /// ```swift
    /// await api.signOutStaff()
    /// ```
    public func signOutStaff(token: String? = nil) async {
        guard let ended = identity.signOutStaff(token: token, core: core) else { return }
        // Best effort: the session ends by itself on the server after its idle timeout anyway.
        _ = try? await send("DELETE", "/staff/sessions/current", options: .init(staff: .token(ended), retries: 0))
    }

    /// The signed-in employee (never their token); nil when nobody is, or the session has ended.
    ///
    /// ```swift
    /// if let staff = api.staff { title = staff.name }
    /// ```
    public var staff: StaffInfo? { identity.staffSessions.info(now: core.clock()) }
}
