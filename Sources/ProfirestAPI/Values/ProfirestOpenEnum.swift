/// A string enum of the API that stays open: known values are constants, any other value is kept as it is, so a
/// value the server adds later never fails decoding. Model members hold the plain `String`; compare it with a
/// constant directly.
///
/// ```swift
/// if punch.state == AttendanceState.working { … }   // or: switch punch.state { case AttendanceState.working: … }
/// ```
public protocol ProfirestOpenEnum: RawRepresentable, Codable, Hashable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible where RawValue == String {
    /// Wraps any wire value, known or not, so that a value the server adds later is kept as it came.
    ///
    /// - Parameter rawValue: the value as the server sends it.
    init(rawValue: String)
}

extension ProfirestOpenEnum {
    /// Lets a string literal stand for a wire value, as in `let type: AttendancePunchType = "clock_in"`.
    ///
    /// - Parameter value: the wire value, such as `clock_in`.
    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    /// Reads any string, so that an unknown value never fails decoding.
    ///
    /// - Parameter decoder: the decoder to read from.
    /// - Throws: `DecodingError` when the value is not a string.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Writes the wire value as a JSON string.
    ///
    /// - Parameter encoder: the encoder to write to.
    /// - Throws: what the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The wire value, as the server sends it, for logs.
    public var description: String { rawValue }

    /// Compares a model's plain `String` member with a constant, as in `punch.state == AttendanceState.working`.
    ///
    /// - Parameters:
    ///   - lhs: a model's plain `String` member.
    ///   - rhs: a constant, such as `AttendanceState.working`.
    /// - Returns: true when the member holds the constant's wire value.
    public static func == (lhs: String, rhs: Self) -> Bool { lhs == rhs.rawValue }

    /// Compares a constant with a model's plain `String` member, as in `AttendanceState.working == punch.state`.
    ///
    /// - Parameters:
    ///   - lhs: a constant, such as `AttendanceState.working`.
    ///   - rhs: a model's plain `String` member.
    /// - Returns: true when the member holds the constant's wire value.
    public static func == (lhs: Self, rhs: String) -> Bool { lhs.rawValue == rhs }

    /// Tells a model's plain `String` member apart from a constant, as in `punch.state != AttendanceState.off`.
    ///
    /// - Parameters:
    ///   - lhs: a model's plain `String` member.
    ///   - rhs: a constant, such as `AttendanceState.working`.
    /// - Returns: true when the member holds another value.
    public static func != (lhs: String, rhs: Self) -> Bool { lhs != rhs.rawValue }

    /// Tells a constant apart from a model's plain `String` member, as in `AttendanceState.off != punch.state`.
    ///
    /// - Parameters:
    ///   - lhs: a constant, such as `AttendanceState.working`.
    ///   - rhs: a model's plain `String` member.
    /// - Returns: true when the member holds another value.
    public static func != (lhs: Self, rhs: String) -> Bool { lhs.rawValue != rhs }

    /// Lets a `switch` over a `String` member use the constants: `case AttendanceState.working:`.
    ///
    /// - Parameters:
    ///   - pattern: the constant of the `case`.
    ///   - value: the `String` member switched over.
    /// - Returns: true when the member holds the constant's wire value.
    public static func ~= (pattern: Self, value: String) -> Bool { pattern.rawValue == value }
}
