import Foundation

/// The employee signed in on this device, as far as the device knows: who, where, and until when the session
/// lasts if nothing else happens (the idle timeout or the session's maximum, whichever comes first).
/// It never carries the staff token.
///
/// ```swift
/// if let staff = api.staff { title = "\(staff.name) (\(staff.role))" }
/// ```
public struct StaffInfo: Sendable, Hashable {
    /// The employee's id, e.g. `emp_1`.
    ///
    /// ```swift
    /// staff.employeeID
    /// ```
    public let employeeID: String
    /// The employee's name.
    ///
    /// ```swift
    /// Text(staff.name)
    /// ```
    public let name: String
    /// The role, e.g. `manager` or `waiter`.
    ///
    /// ```swift
    /// staff.role == "manager"
    /// ```
    public let role: String
    /// The restaurant the session belongs to.
    ///
    /// ```swift
    /// staff.restaurantID
    /// ```
    public let restaurantID: String
    /// When the session ends without further requests, by the device clock.
    ///
    /// ```swift
    /// Text(staff.expiresAt, style: .timer)
    /// ```
    public let expiresAt: Date

    /// An employee's session as the app sees it, for previews and tests of views that show it.
    ///
    /// - Parameters:
    ///   - employeeID: the employee's id, such as `emp_1`.
    ///   - name: the employee's name.
    ///   - role: the role, such as `manager` or `waiter`.
    ///   - restaurantID: the restaurant the session belongs to.
    ///   - expiresAt: when the session ends without further requests.
    ///
    /// ```swift
    /// StaffInfo(employeeID: "emp_1", name: "Jana", role: "manager", restaurantID: "11", expiresAt: end)
    /// ```
    public init(employeeID: String, name: String, role: String, restaurantID: String, expiresAt: Date) {
        self.employeeID = employeeID
        self.name = name
        self.role = role
        self.restaurantID = restaurantID
        self.expiresAt = expiresAt
    }
}
