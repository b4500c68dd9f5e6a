import Foundation

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
