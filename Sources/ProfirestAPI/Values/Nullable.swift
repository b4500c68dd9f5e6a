/// A value that may be explicitly null, for members where "absent" and "null" mean different things — in a merge
/// patch, absent leaves a field unchanged and null clears it. The member itself is optional: `nil` = absent.
///
/// ```swift
/// let patch = CustomerUpdate(note: .null)          // clears the note, keeps everything else
/// let rename = CustomerUpdate(email: .value("jana@example.cz"))
/// ```
public enum Nullable<Wrapped> {
    /// Sends JSON `null`: in a merge patch, clears the member.
    case null
    /// Sends this value: in a merge patch, sets the member.
    case value(Wrapped)

    /// Reads the value, or nil when it is null — for code that treats null and absent alike.
    public var value: Wrapped? {
        if case .value(let wrapped) = self { return wrapped }
        return nil
    }

    /// Transforms the value and keeps null as null, so that a change of type does not lose the difference.
    ///
    /// - Parameter transform: what to do with the value; not called for null.
    /// - Returns: the transformed value, or ``Nullable/null``.
    /// - Throws: whatever `transform` throws.
    public func map<T>(_ transform: (Wrapped) throws -> T) rethrows -> Nullable<T> {
        switch self {
        case .null: return .null
        case .value(let wrapped): return .value(try transform(wrapped))
        }
    }
}

extension Nullable: Sendable where Wrapped: Sendable {}
extension Nullable: Equatable where Wrapped: Equatable {}
extension Nullable: Hashable where Wrapped: Hashable {}

extension Nullable: Codable where Wrapped: Codable {
    /// Reads JSON `null` as ``Nullable/null`` and anything else as a value, so that a decoded patch keeps null apart.
    ///
    /// - Parameter decoder: the decoder to read from.
    /// - Throws: `DecodingError` when the value is not JSON `null` nor a `Wrapped`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self = container.decodeNil() ? .null : .value(try container.decode(Wrapped.self))
    }

    /// Writes ``Nullable/null`` as JSON `null` and a value as itself.
    ///
    /// - Parameter encoder: the encoder to write to.
    /// - Throws: what the encoder throws for the value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .value(let wrapped): try container.encode(wrapped)
        }
    }
}

extension Nullable: ExpressibleByUnicodeScalarLiteral where Wrapped == String {
    /// Lets a string literal stand for a value, as in `CustomerUpdate(note: "VIP")`.
    ///
    /// - Parameter value: the text.
    public init(unicodeScalarLiteral value: String) { self = .value(value) }
}

extension Nullable: ExpressibleByExtendedGraphemeClusterLiteral where Wrapped == String {
    /// Lets a string literal stand for a value, as in `CustomerUpdate(note: "VIP")`.
    ///
    /// - Parameter value: the text.
    public init(extendedGraphemeClusterLiteral value: String) { self = .value(value) }
}

extension Nullable: ExpressibleByStringLiteral where Wrapped == String {
    /// Lets a string literal stand for a value, as in `CustomerUpdate(note: "VIP")`.
    ///
    /// - Parameter value: the text.
    public init(stringLiteral value: String) { self = .value(value) }
}
