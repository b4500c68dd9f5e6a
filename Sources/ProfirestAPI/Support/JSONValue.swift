import Foundation

/// Any JSON value, for the parts of the API whose shape is open (custom fields, raw payloads).
///
/// Integers are kept exactly (`Int`, so ids beyond 2^53 survive a round trip) and decimals as `Double`.
/// JSON has a single number type, so `.integer(1)` and `.number(1.0)` compare and hash as equal.
///
/// ```swift
/// let c: JSONValue = ["name": "Jana", "id": "e1"]; let name = c["name"]?.stringValue
/// ```
public enum JSONValue: Sendable {
    /// JSON `null`. Usage: `let v: JSONValue = nil`
    case null
    /// `true` or `false`. Usage: `let v: JSONValue = .bool(true)`
    case bool(Bool)
    /// A number without a fractional part that fits `Int`. Usage: `let v: JSONValue = .integer(9_007_199_254_740_993)`
    case integer(Int)
    /// Any other number. Usage: `let v: JSONValue = .number(1.5)`
    case number(Double)
    /// A string. Usage: `let v: JSONValue = .string("Jana")`
    case string(String)
    /// An array. Usage: `let v: JSONValue = .array([1, "two"])`
    case array([JSONValue])
    /// An object. Usage: `let v: JSONValue = .object(["id": "e1"])`
    case object([String: JSONValue])
}

extension JSONValue {
    /// The string, or nil for any other kind of value. Usage: `let s = value.stringValue`
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer, also from a `.number` with no fractional part that fits `Int`. Usage: `let n = value.intValue`
    public var intValue: Int? {
        switch self {
        case .integer(let i): return i
        case .number(let d): return Int(exactly: d)
        default: return nil
        }
    }

    /// The number as a `Double`, also from `.integer` (rounded past 2^53). Usage: `let d = value.doubleValue`
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .number(let d): return d
        default: return nil
        }
    }

    /// The boolean, or nil for any other kind of value. Usage: `let b = value.boolValue`
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The elements, or nil when this is not an array. Usage: `let items = value.arrayValue ?? []`
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The members, or nil when this is not an object. Usage: `let fields = value.objectValue ?? [:]`
    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// Whether this is JSON `null`. Usage: `if value.isNull { … }`
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The member named `key`; nil when missing or when this is not an object. Usage: `value["name"]?.stringValue`
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// The element at `index`; nil when out of range or when this is not an array. Usage: `value[0]?.intValue`
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let a) = self, a.indices.contains(index) else { return nil }
        return a[index]
    }
}

extension JSONValue: Hashable {
    /// Compares structurally; numbers compare by value across `.integer` and `.number`. Usage: `a == b`
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

    /// Hashes consistently with `==` (an integral `.number` hashes like `.integer`). Usage: `Set<JSONValue>()`
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
