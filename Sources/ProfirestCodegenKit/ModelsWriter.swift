/// Writes `Models.swift`: a `Codable, Hashable, Sendable` type for every schema.
struct ModelsWriter {
    let declarations: [Declaration]

    func write(header: String) -> String {
        var out = SwiftWriter(fileHeader: header, imports: ["Foundation"])
        writeRegistry(&out)
        for declaration in declarations {
            out.line()
            switch declaration {
            case .structure(let model): writeStruct(model, &out)
            case .openEnum(let model): writeOpenEnum(model, &out)
            case .oneOf(let model): writeOneOf(model, &out)
            }
        }
        return out.text
    }

    /// An internal table of every generated type by schema name, so tests can round-trip the contract's examples.
    private func writeRegistry(_ out: inout SwiftWriter) {
        out.line()
        out.line("/// Every generated model by its contract schema name.")
        out.block("enum GeneratedSchemas") { out in
            out.line("static let types: [String: any (Codable & Sendable).Type] = [")
            for declaration in declarations {
                out.line("    \(SwiftWriter.literal(declaration.schemaName)): \(declaration.name).self,")
            }
            out.line("]")
        }
    }

    // MARK: - Structs

    private func writeStruct(_ model: StructModel, _ out: inout SwiftWriter) {
        out.doc(DocComment(prose: model.documentation, example: "let value = " + exampleCall(model)))
        var conformances = "Codable, Hashable, Sendable"
        if model.pageItem != nil { conformances += ", ProfirestPage" }
        out.block("public struct \(model.name): \(conformances)") { out in
            for property in model.properties {
                var notes: [String] = []
                if let openEnum = property.openEnum { notes.append("Known values: ``\(openEnum)``.") }
                if property.required && property.nullable { notes.append("Always sent; `nil` is JSON null.") }
                out.doc(DocComment(prose: property.documentation, notes: notes))
                out.line("public var \(Naming.identifier(property.swiftName)): \(property.declaredType)")
            }
            if let item = model.pageItem {
                out.line()
                out.line("/// The type of one item of the list.")
                out.line("public typealias Item = \(item.code)")
            }
            out.line()
            writeMemberwiseInit(model, enumTyped: false, &out)
            out.line()
            writeCodingKeys(model, &out)
            out.line()
            writeDecoder(model, &out)
            out.line()
            writeEncoder(model, &out)
        }
        if model.properties.contains(where: { $0.openEnum != nil && $0.type == .string }) {
            out.line()
            out.block("extension \(model.name)") { out in
                writeMemberwiseInit(model, enumTyped: true, &out)
            }
        }
        if model.hasSecrets {
            out.line()
            writeRedaction(model, &out)
        }
    }

    private func parameterType(_ property: PropertyModel, enumTyped: Bool) -> String {
        if enumTyped, let openEnum = property.openEnum, property.type == .string {
            return property.isPlain ? openEnum : (property.isTriState ? "Nullable<\(openEnum)>?" : openEnum + "?")
        }
        return property.declaredType
    }

    private func writeMemberwiseInit(_ model: StructModel, enumTyped: Bool, _ out: inout SwiftWriter) {
        if enumTyped {
            out.doc("The same as the memberwise initializer, with known values as constants: `.\(exampleEnumConstant(model))`.")
        } else {
            out.doc("Creates a value; optional members default to absent.")
        }
        let parameters = model.properties.map { property -> String in
            let label = Naming.identifier(property.swiftName)
            let type = parameterType(property, enumTyped: enumTyped)
            return property.isPlain ? "\(label): \(type)" : "\(label): \(type) = nil"
        }
        let signature = parameters.isEmpty ? "public init()" : "public init(" + parameters.joined(separator: ", ") + ")"
        out.block(signature) { out in
            if enumTyped {
                let arguments = model.properties.map { property -> String in
                    let name = Naming.identifier(property.swiftName)
                    guard property.openEnum != nil, property.type == .string else { return "\(name): \(name)" }
                    if property.isPlain { return "\(name): \(name).rawValue" }
                    if property.isTriState { return "\(name): \(name).map { $0.map(\\.rawValue) }" }
                    return "\(name): \(name)?.rawValue"
                }
                out.line("self.init(" + arguments.joined(separator: ", ") + ")")
            } else {
                for property in model.properties {
                    let name = Naming.identifier(property.swiftName)
                    out.line("self.\(property.swiftName) = \(name)")
                }
            }
        }
    }

    private func writeCodingKeys(_ model: StructModel, _ out: inout SwiftWriter) {
        out.block("private enum CodingKeys: String, CodingKey") { out in
            for property in model.properties {
                let name = Naming.identifier(property.swiftName)
                out.line(property.swiftName == property.wireName ? "case \(name)" : "case \(name) = \(SwiftWriter.literal(property.wireName))")
            }
        }
    }

    private func writeDecoder(_ model: StructModel, _ out: inout SwiftWriter) {
        out.doc("Decodes the wire JSON; a required member that is missing or of the wrong type is an error.")
        out.block("public init(from decoder: any Decoder) throws") { out in
            if model.properties.isEmpty {
                out.line("_ = try decoder.container(keyedBy: CodingKeys.self)")
                return
            }
            out.line("let container = try decoder.container(keyedBy: CodingKeys.self)")
            for property in model.properties {
                let key = "." + Naming.identifier(property.swiftName)
                let type = property.type.code
                let target = "self.\(property.swiftName)"
                switch (property.isPlain, property.isTriState, property.type == .date) {
                case (true, _, true): out.line("\(target) = try container.decodeRFC3339Date(forKey: \(key))")
                case (true, _, false): out.line("\(target) = try container.decode(\(type).self, forKey: \(key))")
                case (_, true, true): out.line("\(target) = try container.decodeNullableRFC3339Date(forKey: \(key))")
                case (_, true, false): out.line("\(target) = try container.decodeNullable(\(type).self, forKey: \(key))")
                case (false, false, true) where property.required:
                    out.line("\(target) = try container.decodeRequiredNullRFC3339Date(forKey: \(key))")
                case (false, false, false) where property.required:
                    out.line("\(target) = try container.decodeRequiredNull(\(type).self, forKey: \(key))")
                case (_, _, true): out.line("\(target) = try container.decodeRFC3339DateIfPresent(forKey: \(key))")
                default: out.line("\(target) = try container.decodeIfPresent(\(type).self, forKey: \(key))")
                }
            }
        }
    }

    private func writeEncoder(_ model: StructModel, _ out: inout SwiftWriter) {
        out.doc("Encodes the wire JSON: absent optionals are left out, nullable members are sent as null.")
        out.block("public func encode(to encoder: any Encoder) throws") { out in
            if model.properties.isEmpty {
                out.line("_ = encoder.container(keyedBy: CodingKeys.self)")
                return
            }
            out.line("var container = encoder.container(keyedBy: CodingKeys.self)")
            for property in model.properties {
                let key = "." + Naming.identifier(property.swiftName)
                let value = "self.\(property.swiftName)"
                let isDate = property.type == .date
                if property.isPlain {
                    out.line(isDate ? "try container.encodeRFC3339Date(\(value), forKey: \(key))" : "try container.encode(\(value), forKey: \(key))")
                } else if property.isTriState {
                    out.line(isDate ? "try container.encodeNullableRFC3339Date(\(value), forKey: \(key))" : "try container.encodeNullable(\(value), forKey: \(key))")
                } else if property.required {
                    out.line(isDate ? "try container.encodeRFC3339DateOrNull(\(value), forKey: \(key))" : "try container.encode(\(value), forKey: \(key))")
                } else {
                    out.line(isDate ? "try container.encodeRFC3339DateIfPresent(\(value), forKey: \(key))" : "try container.encodeIfPresent(\(value), forKey: \(key))")
                }
            }
        }
    }

    // MARK: - Open enums

    private func writeOpenEnum(_ model: OpenEnumModel, _ out: inout SwiftWriter) {
        let first = model.values.first ?? "value"
        out.doc(DocComment(prose: model.documentation,
                           notes: ["Any other string decodes too, so a value added to the API later never breaks decoding."],
                           example: "let value: \(model.name) = .\(Naming.camelCase(first))  // or \(SwiftWriter.literal(first))"))
        out.block("public struct \(model.name): ProfirestOpenEnum") { out in
            out.line("/// The wire value.")
            out.line("public let rawValue: String")
            out.line()
            out.line("/// Wraps any wire value, known or not.")
            out.block("public init(rawValue: String)") { out in
                out.line("self.rawValue = rawValue")
            }
            for value in model.values {
                out.line()
                out.line("/// `\(value)`")
                out.line("public static let \(Naming.identifier(Naming.camelCase(value))) = \(model.name)(rawValue: \(SwiftWriter.literal(value)))")
            }
            out.line()
            out.line("/// Every value this version of the library knows, in the contract's order.")
            let all = model.values.map { "." + Naming.identifier(Naming.camelCase($0)) }.joined(separator: ", ")
            out.line("public static let knownValues: [\(model.name)] = [\(all)]")
        }
    }

    // MARK: - oneOf

    private func writeOneOf(_ model: OneOfModel, _ out: inout SwiftWriter) {
        let first = model.variants.first
        out.doc(DocComment(prose: model.documentation,
                           notes: ["Chosen by `\(model.discriminator)`; a shape added to the API later decodes as `.unknown`."],
                           example: first.map { "if case .\($0.caseName)(let value) = fulfillment { print(value) }" }))
        out.block("public enum \(model.name): Codable, Hashable, Sendable") { out in
            for variant in model.variants {
                out.line("/// `\(model.discriminator)` is `\(variant.discriminatorValue)`.")
                out.line("case \(Naming.identifier(variant.caseName))(\(variant.typeName))")
            }
            out.line("/// A shape this version of the library does not know: the whole JSON object.")
            out.line("case unknown(JSONValue)")
            out.line()
            let keyName = Naming.camelCase(model.discriminator)
            out.line("private enum DiscriminatorKey: String, CodingKey {")
            out.line(keyName == model.discriminator ? "    case \(Naming.identifier(keyName))" : "    case \(Naming.identifier(keyName)) = \(SwiftWriter.literal(model.discriminator))")
            out.line("}")
            out.line()
            out.doc("Decodes by `\(model.discriminator)`.")
            out.block("public init(from decoder: any Decoder) throws") { out in
                out.line("let container = try decoder.container(keyedBy: DiscriminatorKey.self)")
                out.line("let tag = try container.decode(String.self, forKey: .\(Naming.identifier(Naming.camelCase(model.discriminator))))")
                out.switchBlock("tag", model.variants.map { variant in
                    "case \(SwiftWriter.literal(variant.discriminatorValue)): self = .\(Naming.identifier(variant.caseName))(try \(variant.typeName)(from: decoder))"
                } + ["default: self = .unknown(try JSONValue(from: decoder))"])
            }
            out.line()
            out.doc("Encodes the chosen shape as it is.")
            out.block("public func encode(to encoder: any Encoder) throws") { out in
                out.switchBlock("self", model.variants.map { variant in
                    "case .\(Naming.identifier(variant.caseName))(let value): try value.encode(to: encoder)"
                } + ["case .unknown(let value): try value.encode(to: encoder)"])
            }
        }
    }

    // MARK: - Doc examples

    private func exampleCall(_ model: StructModel) -> String {
        let arguments = model.properties.filter(\.isPlain).prefix(3).map { property -> String in
            "\(Naming.identifier(property.swiftName)): \(placeholder(property))"
        }
        let more = model.properties.filter(\.isPlain).count > 3 ? ", …" : ""
        return "\(model.name)(" + arguments.joined(separator: ", ") + more + ")"
    }

    private func placeholder(_ property: PropertyModel) -> String {
        if let openEnum = property.openEnum, let enumModel = declarations.compactMap({ d -> OpenEnumModel? in
            if case .openEnum(let m) = d, m.name == openEnum { return m }
            return nil
        }).first, let value = enumModel.values.first {
            return SwiftWriter.literal(value)
        }
        switch property.type {
        case .string: return "\"…\""
        case .int: return "1"
        case .double: return "1.5"
        case .bool: return "true"
        case .date: return "Date()"
        case .json: return "nil"
        case .named(let name): return "\(name)(…)"
        case .array: return "[]"
        case .dictionary: return "[:]"
        }
    }

    private func exampleEnumConstant(_ model: StructModel) -> String {
        guard let property = model.properties.first(where: { $0.openEnum != nil }),
              let openEnum = property.openEnum,
              case .openEnum(let enumModel)? = declarations.first(where: { $0.name == openEnum }),
              let value = enumModel.values.first else { return "value" }
        return Naming.camelCase(value)
    }
}
