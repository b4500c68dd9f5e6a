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

extension JSONValue: Codable {
    /// Reads any JSON value, so that a body of unknown shape decodes without a model; integral numbers that fit
    /// `Int` become `.integer`, keeping large ids exact.
    ///
    /// - Parameter decoder: the decoder to read from.
    /// - Throws: `DecodingError` when the decoder holds something that is not JSON.
    ///
    /// ```swift
    /// let value = try JSONDecoder().decode(JSONValue.self, from: data)
    /// ```
    public init(from decoder: any Decoder) throws {
        // A tree `JSONReader` read already holds the value: no trial decodes, no thrown errors.
        if let tree = decoder as? JSONValueDecoder {
            self = tree.value
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
            return
        }
        // Strings come first because they are the commonest leaf; JSONDecoder never turns a number or a
        // boolean into a String, so the order only matters between Int and Double: Int first keeps
        // integers beyond 2^53 exact.
        if let s = try? container.decode(String.self) {
            // A number no Swift number holds, set aside by the second decode of an answer (`OversizedNumbers`).
            if s.utf8.first == 0xF4, let number = OversizedNumbers.number(marked: s, decoder: decoder) {
                self = .number(number)
            } else {
                self = .string(s)
            }
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? container.decode(Int.self) {
            self = .integer(i)
        } else if let d = try? container.decode(Double.self) {
            self = .number(d)
        } else if let o = try? container.decode([String: JSONValue].self) {
            self = .object(o)
        } else if let a = try? container.decode([JSONValue].self) {
            self = .array(a)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not a JSON value")
        }
    }

    /// Writes the value as the JSON it stands for, so that a `JSONValue` can be a request body or a model member.
    ///
    /// - Parameter encoder: the encoder to write to.
    /// - Throws: what the encoder throws: `EncodingError` from `JSONEncoder` for a `.number` that is not finite.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .integer(let i): try container.encode(i)
        case .number(let d):
            // From 2^53 on every double is an integer, but JSONEncoder writes its shortest digits
            // (1.2345678901234568e18 as 1234567890123456800), which read back as an exact integer are another number.
            // Its exact integer keeps the value (found by fuzzing).
            if abs(d) >= 9_007_199_254_740_992, let exact = Int(exactly: d) {
                try container.encode(exact)
            } else {
                try container.encode(d)
            }
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        }
    }
}

extension JSONValue {
    /// Makes the JSON a model encodes to, to inspect it or change a member before sending it.
    ///
    /// - Parameters:
    ///   - value: the model (any `Encodable`) to turn into JSON.
    ///   - encoder: the encoder to use, with its strategies; a plain `JSONEncoder` by default.
    /// - Throws: what the encoder throws: `EncodingError` when the model cannot be encoded.
    ///
    /// ```swift
    /// var body = try JSONValue(encoding: customer)
    /// ```
    public init(encoding value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws {
        let data = try encoder.encode(value)
        self = try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Decodes this JSON as a model, for an answer that came as JSON (an outbox's delivered answer, an event's data).
    ///
    /// - Parameters:
    ///   - type: the model to decode as.
    ///   - decoder: the decoder to use, with its strategies; a plain `JSONDecoder` by default.
    /// - Returns: the JSON as `T`.
    /// - Throws: `DecodingError` when the JSON does not fit `T` (a member missing, of another type), and
    ///   `EncodingError` when it holds a number that is not finite.
    ///
    /// ```swift
    /// let punch = try answer.decode(as: AttendancePunch.self)
    /// ```
    public func decode<T: Decodable>(as type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        let data = try JSONEncoder().encode(self)
        return try decoder.decode(T.self, from: data)
    }
}

extension JSONValue: ExpressibleByNilLiteral {
    /// Writes JSON `null` as `nil` in a literal.
    ///
    /// - Parameter nilLiteral: nothing: the literal `nil` carries no value.
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// Writes a JSON boolean as `true` or `false` in a literal.
    ///
    /// - Parameter value: `true` or `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// Writes a JSON integer as an integer literal, kept exact as `.integer`.
    ///
    /// - Parameter value: the number.
    public init(integerLiteral value: Int) { self = .integer(value) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// Writes a JSON number with a fraction as a floating-point literal.
    ///
    /// - Parameter value: the number.
    public init(floatLiteral value: Double) { self = .number(value) }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// Writes a JSON string as a string literal.
    ///
    /// - Parameter value: the text.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// Writes a JSON array as an array literal of any JSON values.
    ///
    /// - Parameter elements: the array's items.
    ///
    /// ```swift
    /// let tags: JSONValue = ["vip", 2, nil]
    /// ```
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// Writes a JSON object as a dictionary literal, so that a body reads like the JSON it sends; a later duplicate
    /// key wins, as in a JSON parser.
    ///
    /// - Parameter elements: the object's members; a later duplicate key wins.
    ///
    /// ```swift
    /// let body: JSONValue = ["name": "Jana Nováková", "loyalty_points": 120]
    /// ```
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object: [String: JSONValue] = [:]
        object.reserveCapacity(elements.count)
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON with sorted keys, so that logs and test failures read the same every time.
    ///
    /// Non-finite numbers, which JSON cannot hold, print as `null` (as JavaScript's `JSON.stringify` does).
    public var description: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .integer(let i): out += String(i)
        case .number(let d): out += d.isFinite ? d.description : "null"
        case .string(let s): Self.writeString(s, to: &out)
        case .array(let a):
            out += "["
            for (n, element) in a.enumerated() {
                if n > 0 { out += "," }
                element.write(to: &out)
            }
            out += "]"
        case .object(let o):
            out += "{"
            for (n, key) in o.keys.sorted().enumerated() {
                if n > 0 { out += "," }
                Self.writeString(key, to: &out)
                out += ":"
                o[key]!.write(to: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// The library's JSON coders in one place.
enum JSONCoding {
    /// Sorted keys: the same model always gives the same bytes, so a repeat with the caller's own Idempotency-Key
    /// after a restart matches the body the server remembers.
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    static let decoder = JSONDecoder()
}
