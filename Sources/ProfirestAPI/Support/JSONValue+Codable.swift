import Foundation

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
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
            return
        }
        // Strings come first because they are the commonest leaf; JSONDecoder never turns a number or a
        // boolean into a String, so the order only matters between Int and Double: Int first keeps
        // integers beyond 2^53 exact.
        if let s = try? container.decode(String.self) {
            self = .string(s)
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
