/// Writes `Operations.swift`: a descriptor of every operation of the contract.
struct OperationsWriter {
    struct Operation: Equatable, Sendable {
        var id: String
        var tag: String
        var method: String
        var path: String
        var isRoot: Bool
        var summary: String
        var pathParameters: [String]
        var queryParameters: [String]
        var headerParameters: [String]
        var requestContentTypes: [String]
        var requestBodyType: String?
        var responses: [(status: Int, type: String)]
        var scopes: [String]
        var staffSession: String?

        static func == (lhs: Operation, rhs: Operation) -> Bool {
            lhs.id == rhs.id && lhs.path == rhs.path && lhs.method == rhs.method
        }
    }

    let operations: [Operation]

    init(contract: JSONNode) throws {
        guard let paths = contract["paths"]?.object else { throw CodegenError("the contract has no paths") }
        var result: [Operation] = []
        for path in paths.keys.sorted() {
            let item = paths[path]!
            for method in ["get", "put", "post", "patch", "delete"] {
                guard let op = item[method] else { continue }
                guard let id = op["operationId"]?.string else { throw CodegenError("\(method.uppercased()) \(path): no operationId") }
                let parameters = try (op["parameters"]?.array ?? []).map { try Self.resolveParameter($0, contract: contract) }
                func names(_ location: String) -> [String] {
                    parameters.filter { $0["in"]?.string == location }.compactMap { $0["name"]?.string }
                }
                let content = op["requestBody"]?["content"]?.object ?? [:]
                var bodyType: String?
                if let json = content["application/json"]?["schema"]?["$ref"]?.string ?? content["application/x-www-form-urlencoded"]?["schema"]?["$ref"]?.string {
                    bodyType = Naming.typeName(String(json.split(separator: "/").last ?? ""))
                } else if !content.isEmpty {
                    bodyType = "Data"
                }
                var responses: [(Int, String)] = []
                for (code, response) in op["responses"]?.object ?? [:] {
                    guard let status = Int(code), (200..<300).contains(status) else { continue }
                    let media = response["content"]?.object ?? [:]
                    if let ref = media["application/json"]?["schema"]?["$ref"]?.string {
                        responses.append((status, Naming.typeName(String(ref.split(separator: "/").last ?? ""))))
                    } else if media.isEmpty {
                        responses.append((status, "Void"))
                    } else {
                        responses.append((status, "Data"))
                    }
                }
                let isRoot = !path.hasPrefix("/v2/")
                let scopes = op["security"]?.array?.first?["oauth2"]?.array?.compactMap(\.string) ?? []
                result.append(Operation(
                    id: id, tag: op["tags"]?.array?.first?.string ?? "", method: method.uppercased(),
                    path: isRoot ? path : String(path.dropFirst(3)), isRoot: isRoot, summary: op["summary"]?.string ?? "",
                    pathParameters: names("path"), queryParameters: names("query"), headerParameters: names("header"),
                    requestContentTypes: content.keys.sorted(), requestBodyType: bodyType,
                    responses: responses.sorted { $0.0 < $1.0 }, scopes: scopes, staffSession: op["x-staff-session"]?.string))
            }
        }
        operations = result.sorted { $0.id < $1.id }
    }

    private static func resolveParameter(_ node: JSONNode, contract: JSONNode) throws -> JSONNode {
        guard let target = node["$ref"]?.string else { return node }
        let name = String(target.split(separator: "/").last ?? "")
        guard let resolved = contract["components"]?["parameters"]?[name] else { throw CodegenError("unresolved parameter \(target)") }
        return resolved
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
                out.doc("`\(op.method) \(op.isRoot ? op.path : "/v2" + op.path)` — \(op.summary)")
                out.line("public static let \(Naming.identifier(op.id)) = OperationDescriptor(")
                out.line("    id: \(SwiftWriter.literal(op.id)), tag: \(SwiftWriter.literal(op.tag)), method: \(SwiftWriter.literal(op.method)),")
                out.line("    path: \(SwiftWriter.literal(op.path)), isRoot: \(op.isRoot),")
                out.line("    pathParameters: \(list(op.pathParameters)), queryParameters: \(list(op.queryParameters)), headerParameters: \(list(op.headerParameters)),")
                out.line("    requestContentTypes: \(list(op.requestContentTypes)), requestBody: \(op.requestBodyType.map(SwiftWriter.literal) ?? "nil"),")
                let responses = op.responses.isEmpty ? "[:]" : "[" + op.responses.map { "\($0.status): \(SwiftWriter.literal($0.type))" }.joined(separator: ", ") + "]"
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

    private func list(_ items: [String]) -> String {
        "[" + items.map(SwiftWriter.literal).joined(separator: ", ") + "]"
    }
}
