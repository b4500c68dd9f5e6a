/// Writes `Operations.swift`: a descriptor of every operation of the contract, and the descriptor type itself.
/// Both are internal: the library reads them (ScopeHint: the scope a refused call needs) and so do its tests; an app
/// calls the typed operations instead.
struct OperationsWriter {
    /// Sorted by operationId.
    let operations: [OperationModel]

    init(operations: [OperationModel]) {
        self.operations = operations.sorted { $0.id < $1.id }
    }

    func write(header: String) -> String {
        var out = SwiftWriter(fileHeader: header)
        writeDescriptorType(&out)
        out.line()
        out.doc("Every operation of the contract, described: method, path, parameters, body and answers.",
                example: "let op = Operations.createAttendancePunch  // op.method == \"POST\"")
        out.block("enum Operations") { out in
            for op in operations {
                out.doc("`\(op.upperMethod) \(op.path)` — \(op.summary ?? "")")
                out.line("static let \(Naming.identifier(op.id)) = OperationDescriptor(")
                out.line("    id: \(SwiftWriter.literal(op.id)), tag: \(SwiftWriter.literal(op.tag ?? "")), method: \(SwiftWriter.literal(op.upperMethod)),")
                out.line("    path: \(SwiftWriter.literal(op.relativePath)), isRoot: \(op.isRoot),")
                out.line("    pathParameters: \(names(op, "path")), queryParameters: \(names(op, "query")), headerParameters: \(names(op, "header")),")
                out.line("    requestContentTypes: \(list(op.requestBody.map(\.contentType))), requestBody: \(requestBodyType(op).map(SwiftWriter.literal) ?? "nil"),")
                let responses = op.successes.isEmpty ? "[:]" : "[" + op.successes.map { "\($0.status): \(SwiftWriter.literal(responseType($0)))" }.joined(separator: ", ") + "]"
                out.line("    responses: \(responses), scopes: \(list(op.scopes)), staffSession: \(op.staffSession.map(SwiftWriter.literal) ?? "nil"))")
                out.line()
            }
            out.line("/// Every operation, sorted by id.")
            out.line("static let all: [OperationDescriptor] = [")
            for op in operations { out.line("    \(Naming.identifier(op.id)),") }
            out.line("]")
        }
        return out.text
    }

    /// The descriptor; its memberwise initializer is what the constants call, so it is written here, beside them.
    private func writeDescriptorType(_ out: inout SwiftWriter) {
        out.line()
        out.doc("What the contract says about one operation: its method, path, parameters, body and answers.",
                example: "Operations.createAttendancePunch.path  // \"/restaurants/{restaurant_id}/attendance/punches\"")
        out.block("struct OperationDescriptor: Sendable, Hashable") { out in
            let members: [(doc: String, declaration: String)] = [
                ("The contract's operationId.", "id: String"),
                ("The contract's tag (the section of the API).", "tag: String"),
                ("The HTTP method, upper case.", "method: String"),
                ("The path template, relative to `/v2` unless `isRoot`.", "path: String"),
                ("Whether the path sits at the root (`/oauth/…`, `/.well-known/…`) rather than under `/v2`.", "isRoot: Bool"),
                ("Names of the path parameters, in the order they appear in the contract.", "pathParameters: [String]"),
                ("Names of the query parameters.", "queryParameters: [String]"),
                ("Names of the header parameters.", "headerParameters: [String]"),
                ("Content types the request body may have; empty when there is no body.", "requestContentTypes: [String]"),
                ("The Swift type of the request body (`\"Data\"` for raw bytes), or nil.", "requestBody: String?"),
                ("Success statuses and the Swift type of their body (`\"Void\"` for none, `\"Data\"` for bytes).", "responses: [Int: String]"),
                ("OAuth scopes the operation needs.", "scopes: [String]"),
                ("`\"required\"` when the operation needs a signed-in employee.", "staffSession: String?"),
            ]
            for member in members {
                out.doc(member.doc)
                out.line("let " + member.declaration)
            }
        }
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
