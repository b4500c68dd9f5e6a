/// A string enum of the API that stays open: known values are constants, any other value is kept as it is, so a
/// value the server adds later never fails decoding. Model members hold the plain `String`; compare it with a
/// constant directly.
///
/// ```swift
/// if punch.state == AttendanceState.working { … }   // or: switch punch.state { case AttendanceState.working: … }
/// ```
public protocol ProfirestOpenEnum: RawRepresentable, Codable, Hashable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible where RawValue == String {
    /// Wraps any wire value.
    init(rawValue: String)
}

extension ProfirestOpenEnum {
    /// A literal is a wire value: `let type: AttendancePunchType = "clock_in"`.
    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    /// Decodes any string.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the wire value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The wire value.
    public var description: String { rawValue }

    /// `punch.state == AttendanceState.working`
    public static func == (lhs: String, rhs: Self) -> Bool { lhs == rhs.rawValue }

    /// `AttendanceState.working == punch.state`
    public static func == (lhs: Self, rhs: String) -> Bool { lhs.rawValue == rhs }

    /// `punch.state != AttendanceState.off`
    public static func != (lhs: String, rhs: Self) -> Bool { lhs != rhs.rawValue }

    /// `AttendanceState.off != punch.state`
    public static func != (lhs: Self, rhs: String) -> Bool { lhs.rawValue != rhs }

    /// Lets a `switch` over a `String` member use the constants: `case AttendanceState.working:`.
    public static func ~= (pattern: Self, value: String) -> Bool { pattern.rawValue == value }
}
