import Foundation

extension JSONValue {
    /// Makes the JSON a model encodes to, to inspect it or change a member before sending it.
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
    /// ```swift
    /// let punch = try answer.decode(as: AttendancePunch.self)
    /// ```
    public func decode<T: Decodable>(as type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        let data = try JSONEncoder().encode(self)
        return try decoder.decode(T.self, from: data)
    }
}
