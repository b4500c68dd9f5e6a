import Foundation

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
