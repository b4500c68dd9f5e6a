/// A value that may be explicitly null, for members where "absent" and "null" mean different things — in a merge
/// patch, absent leaves a field unchanged and null clears it. The member itself is optional: `nil` = absent.
///
/// ```swift
/// let patch = CustomerUpdate(note: .null)          // clears the note, keeps everything else
/// let rename = CustomerUpdate(email: .value("jana@example.cz"))
/// ```
public enum Nullable<Wrapped> {
    /// JSON null.
    case null
    /// A value.
    case value(Wrapped)

    /// The value, or nil for null.
    public var value: Wrapped? {
        if case .value(let wrapped) = self { return wrapped }
        return nil
    }

    /// Transforms the value, keeping null.
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
    /// Decodes null or a value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self = container.decodeNil() ? .null : .value(try container.decode(Wrapped.self))
    }

    /// Encodes null or the value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .value(let wrapped): try container.encode(wrapped)
        }
    }
}

extension Nullable: ExpressibleByUnicodeScalarLiteral where Wrapped == String {
    /// `note: "text"`
    public init(unicodeScalarLiteral value: String) { self = .value(value) }
}

extension Nullable: ExpressibleByExtendedGraphemeClusterLiteral where Wrapped == String {
    /// `note: "text"`
    public init(extendedGraphemeClusterLiteral value: String) { self = .value(value) }
}

extension Nullable: ExpressibleByStringLiteral where Wrapped == String {
    /// `note: "text"`
    public init(stringLiteral value: String) { self = .value(value) }
}
