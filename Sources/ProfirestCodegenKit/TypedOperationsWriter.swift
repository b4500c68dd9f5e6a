/// Writes `TypedOperations.swift`: one method per operation, grouped by the contract's tag
/// (`api.attendance.createPunch(restaurantID: rid, body)`), each a thin call of the public path API so it goes
/// through exactly the same pipeline as `api.post("/restaurants/…", body:)`.
///
/// Operations the contract marks with `x-client-method` — OAuth, the connection, staff sign-in and sign-out, the
/// event stream — are served by that method of the client (which also keeps the tokens), so they get no typed
/// method here.
struct TypedOperationsWriter {
    struct Parameter: Sendable {
        var wireName: String
        var label: String
        var type: String
        var required: Bool
        var location: String
        var isList: Bool
        var description: String?
    }

    struct Method: Sendable {
        var operationID: String
        var tag: String
        var name: String
        var httpMethod: String
        var path: String
        var summary: String
        var description: String
        var pathParameters: [Parameter]
        var queryParameters: [Parameter]
        var ifMatch: Parameter?
        var bodyType: String?
        var bodyContentType: String?
        /// The request body's description, or its schema's.
        var bodyDescription: String?
        var resultType: String
        var resultContentType: String?
        /// The description of the result's schema, or of the answer.
        var resultDescription: String?
        /// The OAuth scopes the operation needs (the contract's `security`), for the doc comment.
        var scopes: [String] = []
        /// `required` or `optional` when a staff session is involved (`x-staff-session`).
        var staffSession: String?
    }

    let methods: [Method]

    init(operations: [OperationModel]) throws {
        var result: [Method] = []
        for op in operations where !op.isRoot && !op.servedByClientMethod {
            guard let tag = op.tag, let success = op.successes.first else { continue }
            if OperationModel.content("text/event-stream", in: success.content) != nil { continue }
            var resultType = "Void"
            var resultContentType: String?
            var resultDescription: String?
            if let json = OperationModel.content("application/json", in: success.content), let type = json.typeName {
                resultType = type
                resultDescription = json.schemaDescription ?? success.description
            } else if let first = success.content.first {
                resultType = "Data"
                resultContentType = first.contentType
                resultDescription = success.description
            }
            var pathParameters: [Parameter] = []
            var queryParameters: [Parameter] = []
            var ifMatch: Parameter?
            for parameter in op.parameters {
                let (type, isList) = Self.swiftType(parameter.schemaType)
                let model = Parameter(wireName: parameter.name, label: Self.label(parameter.name), type: type,
                                      required: parameter.required, location: parameter.location, isList: isList,
                                      description: parameter.description)
                switch (parameter.location, parameter.name) {
                case ("path", _): pathParameters.append(model)
                case ("query", _): queryParameters.append(model)
                case ("header", "If-Match"): ifMatch = model
                default: break // Idempotency-Key, Accept-Language, staff token, If-None-Match: RequestOptions and the client's options
                }
            }
            var bodyType: String?
            var bodyContentType: String?
            var bodyDescription = op.requestBodyDescription
            if let json = OperationModel.content("application/json", in: op.requestBody), let type = json.typeName {
                bodyType = type
                bodyDescription = bodyDescription ?? json.schemaDescription
            } else if let first = op.requestBody.first {
                bodyType = "Data"
                bodyContentType = first.contentType
            }
            result.append(Method(
                operationID: op.id, tag: tag, name: Self.methodName(op.id, tag: tag), httpMethod: op.method, path: op.relativePath,
                summary: op.summary ?? op.id, description: op.description ?? "",
                pathParameters: pathParameters, queryParameters: queryParameters, ifMatch: ifMatch,
                bodyType: bodyType, bodyContentType: bodyContentType, bodyDescription: bodyDescription,
                resultType: resultType, resultContentType: resultContentType, resultDescription: resultDescription,
                scopes: op.scopes, staffSession: op.staffSession))
        }
        methods = result
        var seen: Set<String> = []
        for method in methods where !seen.insert(method.tag + "." + method.name).inserted {
            throw CodegenError("two operations of tag \(method.tag) would both be named \(method.name)")
        }
    }

    // MARK: - Naming

    /// `createAttendancePunch` in tag `Attendance` → `createPunch`; `listOrders` in `Orders` → `list`.
    static func methodName(_ operationID: String, tag: String) -> String {
        var words: [String] = []
        var current = ""
        for character in operationID {
            if character.isUppercase, !current.isEmpty { words.append(current); current = "" }
            current.append(character)
        }
        words.append(current)
        let tagWords = Set([tag, singular(tag)])
        let kept = [words[0]] + words.dropFirst().filter { !tagWords.contains($0) && !tagWords.contains(singular($0)) }
        return kept.joined()
    }

    static func singular(_ word: String) -> String {
        if word.hasSuffix("ies") { return String(word.dropLast(3)) + "y" }
        if word.hasSuffix("s") { return String(word.dropLast()) }
        return word
    }

    /// Accessors that would clash with a member of the client (`api.staff` is the signed-in employee).
    static let accessorOverrides = ["Staff": "employees"]

    /// The accessor of a tag: `Attendance` → `attendance`, `Staff` → `employees`.
    static func accessor(_ tag: String) -> String { accessorOverrides[tag] ?? Naming.camelCase(tag) }

    /// `restaurant_id` → `restaurantID` (the reference's spelling of ids in labels), `cursor` → `cursor`.
    static func label(_ wireName: String) -> String {
        let camel = Naming.camelCase(wireName)
        return camel.hasSuffix("Id") ? String(camel.dropLast(2)) + "ID" : camel
    }

    private static func swiftType(_ schemaType: String?) -> (String, Bool) {
        switch schemaType {
        case "integer": return ("Int", false)
        case "boolean": return ("Bool", false)
        case "array": return ("[String]", true)
        default: return ("String", false)
        }
    }

    // MARK: - Output

    func write(header: String) -> String {
        var out = SwiftWriter(fileHeader: header, imports: ["Foundation"])
        let tags = Array(Set(methods.map(\.tag))).sorted()
        out.line()
        out.block("extension ProfirestApi") { out in
            for (index, tag) in tags.enumerated() {
                if index > 0 { out.line() }
                let example = methods.first { $0.tag == tag }.map { "api.\(Self.accessor(tag)).\($0.name)(…)" } ?? ""
                out.doc("The \(tag) operations of the contract, typed.", example: "try await " + example)
                out.line("public var \(Naming.identifier(Self.accessor(tag))): \(tag)Operations { \(tag)Operations(api: self) }")
            }
        }
        for tag in tags {
            out.line()
            out.doc("The \(tag) operations: a typed method for each, going through the same pipeline as the path API.",
                    example: methods.first { $0.tag == tag }.map { "let result = try await api.\(Self.accessor(tag)).\($0.name)(…)" })
            out.block("public struct \(tag)Operations: Sendable") { out in
                out.line("let api: ProfirestApi")
                for method in methods where method.tag == tag {
                    out.line()
                    writeMethod(method, &out)
                }
            }
        }
        return out.text
    }

    /// The contract's summary as the abstract; its description, the request it sends and what it needs as the
    /// discussion; the contract's descriptions of the parameters, the body and the result.
    private func documentation(_ method: Method, example: String) -> DocComment {
        var request = "Sends `\(method.httpMethod.uppercased()) /v2\(method.path)`"
        // What a new user otherwise learns from 403s, one re-pairing each: the scopes to ask for in pair(scope:).
        var needs: [String] = []
        if !method.scopes.isEmpty {
            needs.append("the scope " + method.scopes.map { "`\($0)`" }.joined(separator: " and "))
        }
        if method.staffSession == "required" { needs.append("a signed-in employee (`signInStaff`)") }
        request += needs.isEmpty ? "." : "; needs " + needs.joined(separator: " and ") + "."
        var parameters: [(name: String, text: String)] = method.pathParameters.map { ($0.label, $0.description ?? "") }
        if method.bodyType != nil { parameters.append(("body", method.bodyDescription ?? "")) }
        if let ifMatch = method.ifMatch { parameters.append(("ifMatch", ifMatch.description ?? "")) }
        parameters += method.queryParameters.map { ($0.label, $0.description ?? "") }
        parameters.append(("options", "Anything else of this request: headers, idempotency key, staff session, retries, timeout."))
        return DocComment(abstract: method.summary + ".", discussion: [method.description, request].filter { !$0.isEmpty },
                          parameters: parameters, returns: method.resultDescription, example: example)
    }

    private func writeMethod(_ method: Method, _ out: inout SwiftWriter) {
        var parameters: [String] = method.pathParameters.map { "\($0.label): String" }
        if let body = method.bodyType { parameters.append("_ body: \(body)") }
        if let ifMatch = method.ifMatch { parameters.append("ifMatch: String" + (ifMatch.required ? "" : "? = nil")) }
        for query in method.queryParameters { parameters.append("\(query.label): \(query.type)? = nil") }
        parameters.append("options: RequestOptions = .init()")
        let call = "\(method.name)(" + (method.pathParameters.map { "\($0.label): …" } + (method.bodyType.map { _ in ["body"] } ?? [])).joined(separator: ", ") + ")"
        out.doc(documentation(method, example: "try await api.\(Self.accessor(method.tag)).\(call)"))
        let returns = method.resultType == "Void" ? "" : " -> \(method.resultType)"
        if method.resultType != "Void" { out.line("@discardableResult") }
        out.block("public func \(Naming.identifier(method.name))(" + parameters.joined(separator: ", ") + ") async throws" + returns) { out in
            var path = method.path
            for parameter in method.pathParameters {
                path = path.replacingOccurrences(of: "{\(parameter.wireName)}", with: "\\(PercentEncoding.rfc3986(\(parameter.label)))")
            }
            let mutates = method.ifMatch != nil || !method.queryParameters.isEmpty || method.resultContentType != nil
            if mutates { out.line("var options = options") }
            if method.ifMatch != nil {
                out.line(method.ifMatch!.required ? "options.ifMatch = ifMatch" : "if let ifMatch { options.ifMatch = ifMatch }")
            }
            for query in method.queryParameters {
                let value: String
                switch query.type {
                case "Int": value = ".int($0)"
                case "Bool": value = ".bool($0)"
                case "[String]": value = ".list($0)"
                default: value = ".string($0)"
                }
                out.line("if let value = \(query.label).map({ QueryValue\(value) }) { options.query[\(SwiftWriter.literal(query.wireName))] = value }")
            }
            let httpMethod = method.httpMethod
            let pathLiteral = "\"\(path)\""
            let bodyArgument: String
            if let contentType = method.bodyContentType {
                bodyArgument = ", body: .data(body, contentType: \(SwiftWriter.literal(contentType)))"
            } else if method.bodyType != nil {
                bodyArgument = ", body: body"
            } else {
                bodyArgument = ""
            }
            switch method.resultType {
            case "Void":
                out.line("try await api.\(httpMethod)(\(pathLiteral)\(bodyArgument), options: options)")
            case "Data":
                out.line("if options.accept == nil { options.accept = \(SwiftWriter.literal(method.resultContentType ?? "application/octet-stream")) }")
                out.line("return try await api.\(httpMethod)(\(pathLiteral)\(bodyArgument), as: Data.self, options: options)")
            default:
                out.line("return try await api.\(httpMethod)(\(pathLiteral)\(bodyArgument), as: \(method.resultType).self, options: options)")
            }
        }
    }
}
