/// Writes the testing kit's `ContractFixtures.swift`: every JSON example answer (2xx) of the contract as a
/// `ContractFixture`, and for each operation its default answer as a typed model (`Fixtures.createAttendancePunch`),
/// so that the kit's in-memory server answers what the contract shows and a test reads it as the app's models.
///
/// An operation's default answer is its 201 when it has one (a create), otherwise its lowest 2xx with an example.
/// Answers without a JSON example (the event stream, a backup's ZIP, a 204) are left out: the kit answers those by
/// behaviour, not by fixture.
struct FixturesWriter {
    struct Example: Sendable {
        var operationID: String
        var method: String
        var path: String
        var status: Int
        var json: String
        /// The model the example decodes as, when the answer's schema is a named one.
        var typeName: String?
    }

    let examples: [Example]

    init(contract: Contract, operations: [OperationModel]) throws {
        var examples: [Example] = []
        for op in operations {
            for success in op.successes {
                guard let content = OperationModel.content("application/json", in: success.content),
                    let example = contract.root["paths"]?[op.path]?[op.method]?["responses"]?[String(success.status)]?[
                        "content"]?["application/json"]?["example"]
                else { continue }
                let json = example.compactJSON
                guard !json.contains("\"##") else {
                    throw CodegenError("\(op.id): its \(success.status) example contains \"## and cannot be a raw string")
                }
                examples.append(Example(
                    operationID: op.id, method: op.upperMethod, path: op.path, status: success.status, json: json,
                    typeName: content.typeName))
            }
        }
        self.examples = examples
    }

    /// The default answer of each operation, in the operations' order.
    var defaults: [Example] {
        var seen: [String: Example] = [:]
        var order: [String] = []
        for example in examples {
            if let current = seen[example.operationID] {
                if example.status == 201 && current.status != 201 { seen[example.operationID] = example }
            } else {
                seen[example.operationID] = example
                order.append(example.operationID)
            }
        }
        return order.compactMap { seen[$0] }
    }

    func write(header: String) -> String {
        var out = SwiftWriter(fileHeader: header, imports: ["Foundation", "ProfirestAPI"])
        out.line()
        out.block("extension Fixtures") { out in
            out.doc("Every JSON example answer (2xx) of the contract, by operation and status, in the contract's order.")
            out.line("static let contract: [ContractFixture] = [")
            for example in examples {
                out.line("    ContractFixture(")
                out.line("        operationID: \"\(example.operationID)\", method: \"\(example.method)\", path: \"\(example.path)\",")
                out.line("        status: \(example.status), json: ##\"\(example.json)\"##),")
            }
            out.line("]")
            for example in defaults {
                guard let type = example.typeName else { continue }
                out.line()
                out.doc(DocComment(
                    abstract: "The contract's example answer of `\(example.operationID)` (`\(example.method) \(example.path)`, "
                        + "\(example.status)), as the model the client decodes it into.",
                    example: "let model = Fixtures.\(example.operationID)"))
                out.line("public static var \(Naming.identifier(example.operationID)): \(type) {")
                out.line("    model(of: \"\(example.operationID)\", status: \(example.status))")
                out.line("}")
            }
        }
        return out.text
    }
}
