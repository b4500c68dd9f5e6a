import Foundation

/// Any JSON value, for the parts of the API whose shape is open — an event's data, a problem's extra members, a
/// quick look at an answer without a model.
///
/// Integers are kept exactly (`Int`, so ids beyond 2^53 survive a round trip) and decimals as `Double`.
/// JSON has a single number type, so `.integer(1)` and `.number(1.0)` compare and hash as equal.
///
/// ```swift
/// let c: JSONValue = ["name": "Jana", "id": "e1"]; let name = c["name"]?.stringValue
/// ```
public enum JSONValue: Sendable {
    /// JSON `null`, which differs from a missing member.
    case null
    /// A JSON boolean.
    case bool(Bool)
    /// A number without a fractional part that fits `Int`, kept exact so that ids beyond 2^53 survive.
    case integer(Int)
    /// Any other number, as a `Double`.
    case number(Double)
    /// A JSON string.
    case string(String)
    /// A JSON array.
    case array([JSONValue])
    /// A JSON object; the order of its members carries no meaning.
    case object([String: JSONValue])
}

extension JSONValue {
    /// Reads the value as a string, or nil for any other kind of value, so that a lookup chains without a `switch`.
    ///
    /// ```swift
    /// let orderID = event.data["order_id"]?.stringValue
    /// ```
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// Reads the value as an integer, also from a `.number` with no fractional part that fits `Int`; nil otherwise.
    public var intValue: Int? {
        switch self {
        case .integer(let i): return i
        case .number(let d): return Int(exactly: d)
        default: return nil
        }
    }

    /// Reads the value as a `Double`, also from `.integer` (rounded past 2^53); nil for anything but a number.
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .number(let d): return d
        default: return nil
        }
    }

    /// Reads the value as a boolean, or nil for any other kind of value.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// Reads the elements of an array, or nil when this is not an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// Reads the members of an object, or nil when this is not an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// Tells JSON `null` apart from a value, which a missing member (nil from a lookup) is not.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Looks up the member named `key` of an object, nil when it is missing or this is not an object, so that paths
    /// chain: `value["employee"]?["name"]?.stringValue`.
    ///
    /// - Parameter key: the member's name.
    /// - Returns: the member, or nil when it is missing or this is not an object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// Looks up the element at `index` of an array, nil when it is out of range or this is not an array, so that a
    /// lookup never traps.
    ///
    /// - Parameter index: the element's position, from 0.
    /// - Returns: the element, or nil when it is out of range or this is not an array.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let a) = self, a.indices.contains(index) else { return nil }
        return a[index]
    }
}

extension JSONValue: Hashable {
    /// Compares two values as JSON does: structurally, with numbers equal by value across `.integer` and `.number`.
    ///
    /// - Parameters:
    ///   - lhs: a value.
    ///   - rhs: the value to compare it with.
    /// - Returns: true when both are the same JSON.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.integer(let a), .number(let b)), (.number(let b), .integer(let a)): return Int(exactly: b) == a
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a == b
        default: return false
        }
    }

    /// Hashes consistently with `==` (an integral `.number` hashes like `.integer`), so that values work as set
    /// members and dictionary keys.
    ///
    /// - Parameter hasher: the hasher to feed.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(1); hasher.combine(b)
        case .integer(let i): hasher.combine(2); hasher.combine(i)
        case .number(let d):
            if let i = Int(exactly: d) {
                hasher.combine(2); hasher.combine(i)
            } else {
                hasher.combine(3); hasher.combine(d)
            }
        case .string(let s): hasher.combine(4); hasher.combine(s)
        case .array(let a): hasher.combine(5); hasher.combine(a)
        case .object(let o): hasher.combine(6); hasher.combine(o)
        }
    }
}
