/// Writes `Operations.swift`: a descriptor of every operation of the contract.
struct OperationsWriter {
    /// Sorted by operationId.
    let operations: [OperationModel]

    init(operations: [OperationModel]) {
        self.operations = operations.sorted { $0.id < $1.id }
    }

    func write(header: String) -> String {
        var out = SwiftWriter()
        out.line(header)
        out.line("// swiftlint:disable all")
        out.line()
        out.doc("Every operation of the contract, described: method, path, parameters, body and answers.",
                example: "let op = Operations.createAttendancePunch  // op.method == \"POST\"")
        out.block("public enum Operations") { out in
            for op in operations {
                out.doc("`\(op.upperMethod) \(op.path)` — \(op.summary ?? "")")
                out.line("public static let \(Naming.identifier(op.id)) = OperationDescriptor(")
                out.line("    id: \(SwiftWriter.literal(op.id)), tag: \(SwiftWriter.literal(op.tag ?? "")), method: \(SwiftWriter.literal(op.upperMethod)),")
                out.line("    path: \(SwiftWriter.literal(op.relativePath)), isRoot: \(op.isRoot),")
                out.line("    pathParameters: \(names(op, "path")), queryParameters: \(names(op, "query")), headerParameters: \(names(op, "header")),")
                out.line("    requestContentTypes: \(list(op.requestBody.map(\.contentType))), requestBody: \(requestBodyType(op).map(SwiftWriter.literal) ?? "nil"),")
                let responses = op.successes.isEmpty ? "[:]" : "[" + op.successes.map { "\($0.status): \(SwiftWriter.literal(responseType($0)))" }.joined(separator: ", ") + "]"
                out.line("    responses: \(responses), scopes: \(list(op.scopes)), staffSession: \(op.staffSession.map(SwiftWriter.literal) ?? "nil"))")
                out.line()
            }
            out.line("/// Every operation, sorted by id.")
            out.line("public static let all: [OperationDescriptor] = [")
            for op in operations { out.line("    \(Naming.identifier(op.id)),") }
            out.line("]")
        }
        return out.text
    }

    /// The Swift type of the body: the JSON or form schema's, `Data` for any other content, nil without a body.
    private func requestBodyType(_ op: OperationModel) -> String? {
        let schema = OperationModel.content("application/json", in: op.requestBody)?.typeName
            ?? OperationModel.content("application/x-www-form-urlencoded", in: op.requestBody)?.typeName
        return schema ?? (op.requestBody.isEmpty ? nil : "Data")
    }

    /// The Swift type of an answer's body: the JSON schema's, `Void` without a body, `Data` for any other content.
    private func responseType(_ response: OperationModel.Response) -> String {
        if let type = OperationModel.content("application/json", in: response.content)?.typeName { return type }
        return response.content.isEmpty ? "Void" : "Data"
    }

    private func names(_ op: OperationModel, _ location: String) -> String {
        list(op.parameters.filter { $0.location == location }.map(\.name))
    }

    private func list(_ items: [String]) -> String {
        "[" + items.map(SwiftWriter.literal).joined(separator: ", ") + "]"
    }
}
