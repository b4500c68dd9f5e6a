/// Turns `components/schemas` into declarations. Deterministic: schemas and properties are visited in sorted order
/// except where the contract gives an order (`required`, `enum`, `oneOf`).
struct SchemaAnalyzer {
    let contract: Contract
    let schemas: [String: JSONNode]

    init(contract: Contract) throws {
        self.contract = contract
        schemas = try contract.schemas()
    }

    func declarations() throws -> [Declaration] {
        var result: [Declaration] = []
        for name in schemas.keys.sorted() {
            result.append(contentsOf: try declarations(forSchema: name, schemas[name]!))
        }
        return result.sorted { $0.name < $1.name }
    }

    // MARK: - One schema

    private func declarations(forSchema name: String, _ schema: JSONNode) throws -> [Declaration] {
        let typeName = Naming.typeName(name)
        let documentation = schema["description"]?.string
        if let values = schema["enum"]?.array {
            return [.openEnum(OpenEnumModel(name: typeName, documentation: documentation,
                                            values: try values.map { try stringValue($0, in: name) }, example: schema["example"]))]
        }
        if let variants = schema["oneOf"]?.array, schema["discriminator"] != nil {
            return [.oneOf(try oneOf(typeName, schema, variants: variants, documentation: documentation))]
        }
        var nested: [Declaration] = []
        let properties = try collectProperties(of: schema, owner: typeName, nested: &nested)
        var model = StructModel(name: typeName, documentation: documentation, properties: properties, example: schema["example"])
        if let data = properties.first(where: { $0.wireName == "data" }), case .array(let item) = data.type,
           let cursor = properties.first(where: { $0.wireName == "next_cursor" }), cursor.type == .string, !cursor.isPlain, !cursor.isTriState {
            model.pageItem = item
        }
        return [.structure(model)] + nested
    }

    private func oneOf(_ typeName: String, _ schema: JSONNode, variants: [JSONNode], documentation: String?) throws -> OneOfModel {
        guard let property = schema["discriminator"]?["propertyName"]?.string,
              let mapping = schema["discriminator"]?["mapping"]?.object else {
            throw CodegenError("\(typeName): a oneOf needs discriminator.propertyName and an explicit mapping")
        }
        var result: [OneOfModel.Variant] = []
        for variant in variants {
            guard let target = variant["$ref"]?.string else { throw CodegenError("\(typeName): oneOf members must be $refs") }
            _ = try contract.resolve(variant, context: typeName)
            guard let value = mapping.first(where: { $0.value.string == target })?.key else {
                throw CodegenError("\(typeName): \(target) has no discriminator mapping")
            }
            result.append(.init(discriminatorValue: value, caseName: Naming.camelCase(value), typeName: Contract.typeName(ofRef: target)))
        }
        return OneOfModel(name: typeName, documentation: documentation, discriminator: property, variants: result, example: schema["example"])
    }

    /// Properties of an object schema, with `allOf` members flattened in order.
    private func collectProperties(of schema: JSONNode, owner: String, nested: inout [Declaration]) throws -> [PropertyModel] {
        var required: [String] = []
        var members: [String: JSONNode] = [:]
        func absorb(_ part: JSONNode) throws {
            if part["$ref"] != nil {
                try absorb(try contract.resolve(part, context: owner))
                return
            }
            for item in part["allOf"]?.array ?? [] { try absorb(item) }
            for (key, value) in part["properties"]?.object ?? [:] { members[key] = value }
            for key in part["required"]?.array ?? [] {
                if let key = key.string, !required.contains(key) { required.append(key) }
            }
        }
        try absorb(schema)
        if members.isEmpty, schema["allOf"] == nil, schema["type"]?.string != "object" {
            throw CodegenError("\(owner): not an object, an enum or a discriminated oneOf")
        }
        let optional = members.keys.filter { !required.contains($0) }.sorted()
        var result: [PropertyModel] = []
        for wire in required + optional {
            guard let propertySchema = members[wire] else { throw CodegenError("\(owner): required \(wire) is not a property") }
            let (type, nullable, openEnum) = try resolveType(propertySchema, owner: owner, property: wire, nested: &nested)
            let secret = try secretFlag(propertySchema, owner: owner, property: wire)
            result.append(PropertyModel(wireName: wire, swiftName: Naming.camelCase(wire), type: type, required: required.contains(wire),
                                        nullable: nullable, documentation: try memberDescription(propertySchema, owner: owner, property: wire),
                                        openEnum: openEnum,
                                        secret: secret))
        }
        return result
    }

    /// The Swift type of a property schema, whether it may be null, and the open enum naming its values.
    func resolveType(_ schema: JSONNode, owner: String, property: String, nested: inout [Declaration]) throws -> (SwiftType, Bool, String?) {
        if let target = schema["$ref"]?.string {
            let name = Contract.typeName(ofRef: target)
            if try contract.resolve(schema, context: "\(owner).\(property)")["enum"] != nil {
                return (.string, false, name)
            }
            return (.named(name), false, nil)
        }
        if let options = schema["oneOf"]?.array ?? schema["anyOf"]?.array {
            let nonNull = options.filter { $0["type"]?.string != "null" }
            if nonNull.count == 1, options.count == 2 {
                let (type, _, openEnum) = try resolveType(nonNull[0], owner: owner, property: property, nested: &nested)
                return (type, true, openEnum)
            }
            throw CodegenError("\(owner).\(property): an inline oneOf other than [X, null]; name it in components/schemas")
        }
        var typeName = schema["type"]?.string
        var nullable = false
        if let types = schema["type"]?.array?.compactMap(\.string) {
            nullable = types.contains("null")
            let others = types.filter { $0 != "null" }
            guard others.count == 1 else { throw CodegenError("\(owner).\(property): several types \(types)") }
            typeName = others[0]
        }
        if schema["enum"] != nil, typeName == "string" {
            // An inline enum of one value is a discriminator tag; more values want a named schema.
            if (schema["enum"]?.array?.count ?? 0) > 1 {
                throw CodegenError("\(owner).\(property): an inline enum; name it in components/schemas so it gets constants")
            }
            return (.string, nullable, nil)
        }
        switch typeName {
        case "string":
            return (schema["format"]?.string == "date-time" ? .date : .string, nullable, nil)
        case "integer":
            return (.int, nullable, nil)
        case "number":
            return (.double, nullable, nil)
        case "boolean":
            return (.bool, nullable, nil)
        case "array":
            guard let items = schema["items"] else { throw CodegenError("\(owner).\(property): array without items") }
            let (item, itemNullable, _) = try resolveType(items, owner: owner, property: property + "_item", nested: &nested)
            if itemNullable { throw CodegenError("\(owner).\(property): arrays of nullable items are not supported") }
            if item == .date { throw CodegenError("\(owner).\(property): arrays of dates are not supported") }
            return (.array(item), nullable, nil)
        case "object":
            if schema["properties"] != nil {
                let nestedName = owner + Naming.pascalCase(property)
                var inner: [Declaration] = []
                let properties = try collectProperties(of: schema, owner: nestedName, nested: &inner)
                nested.append(.structure(StructModel(name: nestedName, documentation: schema["description"]?.string,
                                                     properties: properties, example: schema["example"])))
                nested.append(contentsOf: inner)
                return (.named(nestedName), nullable, nil)
            }
            if let additional = schema["additionalProperties"], additional.object != nil {
                let (value, _, _) = try resolveType(additional, owner: owner, property: property + "_value", nested: &nested)
                if value == .date { throw CodegenError("\(owner).\(property): maps of dates are not supported") }
                return (.dictionary(value), nullable, nil)
            }
            return (.dictionary(.json), nullable, nil)
        case nil:
            return (.json, nullable, nil)
        default:
            throw CodegenError("\(owner).\(property): unsupported type \(typeName ?? "?")")
        }
    }

    /// The member's own description or, for a member that is a `$ref` (or a `$ref` or null), its schema's.
    private func memberDescription(_ schema: JSONNode, owner: String, property: String) throws -> String? {
        if let own = schema["description"]?.string { return own }
        let options = (schema["oneOf"]?.array ?? schema["anyOf"]?.array ?? [schema]).filter { $0["type"]?.string != "null" }
        guard options.count == 1, options[0]["$ref"] != nil else { return nil }
        return try contract.resolve(options[0], context: "\(owner).\(property)")["description"]?.string
    }

    /// `x-secret` is `true` or absent; anything else is a typo that would print a secret, so it stops generation.
    private func secretFlag(_ schema: JSONNode, owner: String, property: String) throws -> Bool {
        guard let flag = schema["x-secret"] else { return false }
        guard let value = flag.bool, value else {
            throw CodegenError("\(owner).\(property): x-secret must be true (or left out)")
        }
        return true
    }

    private func stringValue(_ node: JSONNode, in schema: String) throws -> String {
        guard let value = node.string else { throw CodegenError("\(schema): enum values must be strings") }
        return value
    }
}
