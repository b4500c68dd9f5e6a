/// The generator's view of the contract's schemas: what Swift declarations they become.

/// The Swift type of a value.
indirect enum SwiftType: Equatable, Sendable {
    case string
    case int
    case double
    case bool
    case date
    case json
    case named(String)
    case array(SwiftType)
    case dictionary(SwiftType)

    var code: String {
        switch self {
        case .string: return "String"
        case .int: return "Int"
        case .double: return "Double"
        case .bool: return "Bool"
        case .date: return "Date"
        case .json: return "JSONValue"
        case .named(let name): return name
        case .array(let item): return "[\(item.code)]"
        case .dictionary(let value): return "[String: \(value.code)]"
        }
    }
}

/// One property of a struct.
struct PropertyModel: Equatable, Sendable {
    var wireName: String
    var swiftName: String
    var type: SwiftType
    var required: Bool
    var nullable: Bool
    var documentation: String?
    /// The open enum that lists the known values, when the property is an enum typed as `String`.
    var openEnum: String?
    /// Marked `x-secret: true` in the contract (a token, a PIN, a PKCE verifier): descriptions and mirrors show
    /// only whether it is there.
    var secret = false

    /// Required and never null: the only shape that is not an optional in Swift.
    var isPlain: Bool { required && !nullable }
    /// Optional and nullable: absent, null and a value are three different things (a merge patch).
    var isTriState: Bool { !required && nullable }

    var declaredType: String {
        if isPlain { return type.code }
        if isTriState { return "Nullable<\(type.code)>?" }
        return type.code + "?"
    }
}

/// A struct for an object schema (also for a flattened `allOf`).
struct StructModel: Equatable, Sendable {
    var name: String
    var documentation: String?
    var properties: [PropertyModel]
    var example: JSONNode?
    /// `{data, next_cursor}` lists conform to `ProfirestPage`.
    var pageItem: SwiftType?

    /// Whether the struct gets a redacting description and mirror (ModelsWriter+Redaction.swift).
    var hasSecrets: Bool { properties.contains(where: \.secret) }
}

/// An open enum for a string schema with `enum` values: known values as constants, any other value accepted.
struct OpenEnumModel: Equatable, Sendable {
    var name: String
    var documentation: String?
    var values: [String]
    var example: JSONNode?
}

/// A `oneOf` with a discriminator: one case a variant plus `unknown` for variants added later.
struct OneOfModel: Equatable, Sendable {
    struct Variant: Equatable, Sendable {
        var discriminatorValue: String
        var caseName: String
        var typeName: String
    }
    var name: String
    var documentation: String?
    var discriminator: String
    var variants: [Variant]
    var example: JSONNode?
}

enum Declaration: Equatable, Sendable {
    case structure(StructModel)
    case openEnum(OpenEnumModel)
    case oneOf(OneOfModel)

    var name: String {
        switch self {
        case .structure(let model): return model.name
        case .openEnum(let model): return model.name
        case .oneOf(let model): return model.name
        }
    }

    /// The contract's name of the schema (differs from ``name`` where a Swift name would clash).
    var schemaName: String {
        Naming.typeRenames.first(where: { $0.value == name })?.key ?? name
    }
}

/// A contract the generator cannot turn into Swift: the message says which schema and why.
public struct CodegenError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}
