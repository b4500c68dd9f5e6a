import Foundation

extension JSONValue {
    /// Turns any `Encodable` into the JSON it encodes to.
    /// Usage: `let v = try JSONValue(encoding: employee)`
    public init(encoding value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws {
        let data = try encoder.encode(value)
        self = try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Decodes this JSON as a `Decodable` type.
    /// Usage: `let e = try value.decode(as: Employee.self)`
    public func decode<T: Decodable>(as type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        let data = try JSONEncoder().encode(self)
        return try decoder.decode(T.self, from: data)
    }
}
