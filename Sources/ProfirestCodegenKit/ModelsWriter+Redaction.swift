/// The redacting description and mirror of a model with `x-secret` members. The default ones print every member,
/// and `print`, string interpolation, `dump` and crash reporters that reflect values all end up in logs; these
/// show the secret members only as `<redacted>` (present) or `nil` (absent) and every other member as Swift's
/// default would. `RedactedFields` and `RedactedSecret` are the library's own (Observing/RedactedFields.swift).
extension ModelsWriter {
    func writeRedaction(_ model: StructModel, _ out: inout SwiftWriter) {
        let secrets = model.properties.filter(\.secret).map { "`\(Naming.identifier($0.swiftName))`" }
        let listed = secrets.count == 1 ? secrets[0] : secrets.dropLast().joined(separator: ", ") + " and " + secrets.last!
        let conformances = "CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable"
        out.block("extension \(model.name): \(conformances)") { out in
            out.doc("Every member, \(listed) only as `<redacted>` or `nil`, so printing never shows a secret.")
            out.line("public var description: String { RedactedFields.description(of: \(SwiftWriter.literal(model.name)), redactedFields) }")
            out.line()
            out.doc("The same as `description`.")
            out.line("public var debugDescription: String { description }")
            out.line()
            out.doc("What `dump` and debuggers show: the same members as `description`.")
            out.line("public var customMirror: Mirror { Mirror(self, children: redactedFields, displayStyle: .struct) }")
            out.line()
            out.block("private var redactedFields: [Mirror.Child]") { out in
                let fields = model.properties.map { property -> String in
                    let value = "self.\(property.swiftName)"
                    let shown = property.secret ? "RedactedSecret(\(value))" : (property.isPlain ? value : value + " as Any")
                    return "(\(SwiftWriter.literal(property.swiftName)), \(shown)),"
                }
                out.line("[")
                for field in fields { out.line("    " + field) }
                out.line("]")
            }
        }
    }
}
