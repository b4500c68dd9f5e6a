import Foundation

/// The signed-in employee on this client (filled by staff sign-in; passed to `onStaffExpired`).
///
/// ```swift
/// let api = ProfirestApi(options: .init(onStaffExpired: { staff in print("\(staff.name) signed out") }))
/// ```
public struct StaffInfo: Sendable, Hashable {
    /// The employee's id. Usage: `staff.employeeID`
    public var employeeID: String
    /// The employee's name. Usage: `staff.name`
    public var name: String
    /// The employee's role, e.g. `waiter`. Usage: `staff.role`
    public var role: String
    /// The restaurant of the session. Usage: `staff.restaurantID`
    public var restaurantID: String
    /// When the session ends at the latest, by the device clock. Usage: `staff.expiresAt`
    public var expiresAt: Date

    /// Usage: `StaffInfo(employeeID: "emp_1", name: "Jana", role: "waiter", restaurantID: "11", expiresAt: end)`
    public init(employeeID: String, name: String, role: String, restaurantID: String, expiresAt: Date) {
        self.employeeID = employeeID
        self.name = name
        self.role = role
        self.restaurantID = restaurantID
        self.expiresAt = expiresAt
    }
}
