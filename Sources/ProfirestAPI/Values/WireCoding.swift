import Foundation

// The member shapes the generated models use, decoded the same way whatever JSONDecoder strategy a caller set:
// dates are RFC 3339 strings, "required but nullable" means the key must be there, and `Nullable` tells absent
// from null.

extension KeyedDecodingContainer {
    func decodeRFC3339Date(forKey key: Key) throws -> Date {
        let text = try decode(String.self, forKey: key)
        guard let date = RFC3339.date(from: text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not an RFC 3339 timestamp")
        }
        return date
    }

    func decodeRFC3339DateIfPresent(forKey key: Key) throws -> Date? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decodeRFC3339Date(forKey: key)
    }

    func decodeRequiredNullRFC3339Date(forKey key: Key) throws -> Date? {
        try requirePresence(of: key)
        return try decodeRFC3339DateIfPresent(forKey: key)
    }

    func decodeNullableRFC3339Date(forKey key: Key) throws -> Nullable<Date>? {
        guard contains(key) else { return nil }
        if try decodeNil(forKey: key) { return .null }
        return .value(try decodeRFC3339Date(forKey: key))
    }

    func decodeRequiredNull<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try requirePresence(of: key)
        return try decodeIfPresent(type, forKey: key)
    }

    func decodeNullable<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> Nullable<T>? {
        guard contains(key) else { return nil }
        if try decodeNil(forKey: key) { return .null }
        return .value(try decode(type, forKey: key))
    }

    private func requirePresence(of key: Key) throws {
        guard contains(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "required member \"\(key.stringValue)\" is missing (it may be null, not absent)"))
        }
    }
}

extension KeyedEncodingContainer {
    mutating func encodeRFC3339Date(_ date: Date, forKey key: Key) throws {
        try encode(RFC3339.string(from: date), forKey: key)
    }

    mutating func encodeRFC3339DateIfPresent(_ date: Date?, forKey key: Key) throws {
        if let date { try encodeRFC3339Date(date, forKey: key) }
    }

    mutating func encodeRFC3339DateOrNull(_ date: Date?, forKey key: Key) throws {
        if let date { try encodeRFC3339Date(date, forKey: key) } else { try encodeNil(forKey: key) }
    }

    mutating func encodeNullableRFC3339Date(_ value: Nullable<Date>?, forKey key: Key) throws {
        switch value {
        case nil: break
        case .null?: try encodeNil(forKey: key)
        case .value(let date)?: try encodeRFC3339Date(date, forKey: key)
        }
    }

    mutating func encodeNullable<T: Encodable>(_ value: Nullable<T>?, forKey key: Key) throws {
        switch value {
        case nil: break
        case .null?: try encodeNil(forKey: key)
        case .value(let wrapped)?: try encode(wrapped, forKey: key)
        }
    }
}
