import Foundation

/// Decodes a model from a `JSONValue` tree that `JSONReader` read, so that a model's own `init(from:)` — the generated
/// one — runs without `JSONDecoder`, and its `JSONValue` members are handed over whole instead of rebuilt value by value.
///
/// It decodes as a plain `JSONDecoder` does (default strategies: `Date` as seconds since 2001, `Data` as Base64, `URL`
/// from a string), with the same kinds of `DecodingError` and coding paths, so errors read as before.
struct JSONValueDecoder: Decoder {
    /// The value this decoder stands at.
    let value: JSONValue
    /// The path to the value that holds this one, and this one's key or index in it: joined only when asked for (an
    /// error, a nested container), since most members decode without ever needing their path.
    private let parentPath: [any CodingKey]
    private let key: (any CodingKey)?
    var codingPath: [any CodingKey] { key.map { parentPath + [$0] } ?? parentPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ value: JSONValue, codingPath: [any CodingKey] = []) {
        self.value = value
        self.parentPath = codingPath
        self.key = nil
    }

    /// The decoder of a member or element `key` of the value at `parentPath`.
    init(_ value: JSONValue, parentPath: [any CodingKey], key: any CodingKey) {
        self.value = value
        self.parentPath = parentPath
        self.key = key
    }

    /// Reads `bytes` as JSON and decodes a `T` from it, accepting what `JSONDecoder` accepts.
    ///
    /// Text the reader refuses although `JSONDecoder` reads it — a trailing comma, a broken value under a repeated
    /// key, which `JSONDecoder` never reads — is decoded by `JSONDecoder`, as before; text both refuse fails with the
    /// reader's error, which names the byte.
    static func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeBufferPointer<UInt8>) throws -> T {
        let value: JSONValue
        do {
            value = try JSONReader.value(from: bytes)
        } catch {
            if let decoded = try? JSONCoding.decoder.decode(T.self, from: Data(buffer: bytes)) { return decoded }
            throw error
        }
        return try JSONValueDecoder(value).decode(T.self)
    }

    /// Reads a string's UTF-8 as JSON and decodes a `T` from it (in place when the string is contiguous),
    /// accepting what `JSONDecoder` accepts.
    static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        var text = text
        return try text.withUTF8 { try decode(T.self, from: $0) }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw Self.mismatch([String: Any].self, value, codingPath)
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let array) = value else {
            throw Self.mismatch([Any].self, value, codingPath)
        }
        return UnkeyedContainer(array: array, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    /// The `typeMismatch` JSONDecoder throws, in its words.
    static func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
        if case .null = value {
            return .valueNotFound(type, .init(codingPath: path, debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        }
        let found: String
        switch value {
        case .null: found = "null"
        case .bool: found = "bool"
        case .integer, .number: found = "number"
        case .string: found = "a string"
        case .array: found = "an array"
        case .object: found = "a dictionary"
        }
        return .typeMismatch(type, .init(codingPath: path, debugDescription: "Expected to decode \(type) but found \(found) instead."))
    }
}

extension JSONValueDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { value.isNull }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let b) = value else { throw Self.mismatch(type, value, codingPath) }
        return b
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let s) = value else { throw Self.mismatch(type, value, codingPath) }
        return s
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch value {
        case .integer(let i): return Double(i)
        case .number(let d): return d
        default: throw Self.mismatch(type, value, codingPath)
        }
    }

    func decode(_ type: Float.Type) throws -> Float {
        let double = try decode(Double.self)
        let float = Float(double)
        guard float.isFinite else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath, debugDescription: "Parsed JSON number <\(double)> does not fit in \(type)."))
        }
        return float
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    private func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        let exact: I?
        let number: String
        switch value {
        case .integer(let i): (exact, number) = (I(exactly: i), String(i))
        case .number(let d): (exact, number) = (I(exactly: d), "\(d)")
        default: throw Self.mismatch(type, value, codingPath)
        }
        guard let exact else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath, debugDescription: "Parsed JSON number <\(number)> does not fit in \(type)."))
        }
        return exact
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // The open members hand over their subtree whole; the rest decode as JSONDecoder decodes them.
        if T.self == JSONValue.self { return value as! T }
        if T.self == [String: JSONValue].self {
            guard case .object(let object) = value else { throw Self.mismatch(type, value, codingPath) }
            return object as! T
        }
        if T.self == Date.self { return Date(timeIntervalSinceReferenceDate: try decode(Double.self)) as! T }
        if T.self == URL.self {
            let text = try decode(String.self)
            guard let url = URL(string: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "Invalid URL string."))
            }
            return url as! T
        }
        if T.self == Data.self {
            guard let data = Data(base64Encoded: try decode(String.self)) else {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: codingPath, debugDescription: "Encountered Data is not valid Base64."))
            }
            return data as! T
        }
        return try T(from: self)
    }
}

/// A coding path step of this decoder's own: an array element, named as JSONDecoder names it ("Index 3"), or "super".
private struct PathKey: CodingKey {
    private let name: String?
    let intValue: Int?
    /// Written out only when a path is shown: an array's elements decode without making a string each.
    var stringValue: String { name ?? "Index \(intValue ?? 0)" }
    init(index: Int) { (name, intValue) = (nil, index) }
    init?(stringValue: String) { (name, intValue) = (stringValue, nil) }
    init?(intValue: Int) { self.init(index: intValue) }
    static let superKey = PathKey(stringValue: "super")!
}

/// The members of an object, by the model's keys.
private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: JSONValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValue {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(
                codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return value
    }

    private func decoder(_ key: Key) throws -> JSONValueDecoder {
        JSONValueDecoder(try member(key), parentPath: codingPath, key: key)
    }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key).isNull }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder(key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder(key).decode(type) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        JSONValueDecoder(object["super"] ?? .null, parentPath: codingPath, key: PathKey.superKey)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONValueDecoder(object[key.stringValue] ?? .null, parentPath: codingPath, key: key)
    }
}

/// The elements of an array, in order.
private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let array: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(array: [JSONValue], codingPath: [any CodingKey]) {
        self.array = array
        self.codingPath = codingPath
    }

    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    private mutating func next(_ type: Any.Type) throws -> JSONValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(
                codingPath: codingPath + [PathKey(index: currentIndex)], debugDescription: "Unkeyed container is at end."))
        }
        defer { currentIndex += 1 }
        return JSONValueDecoder(array[currentIndex], parentPath: codingPath, key: PathKey(index: currentIndex))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any?.self, .init(
                codingPath: codingPath + [PathKey(index: currentIndex)], debugDescription: "Unkeyed container is at end."))
        }
        if array[currentIndex].isNull {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type).decode(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try next([String: Any].self).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next([Any].self).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try next(Any.self) }
}
