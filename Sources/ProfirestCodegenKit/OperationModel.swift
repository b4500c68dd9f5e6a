/// One operation of the contract, read once with its `$ref`s resolved: what both `Operations.swift` and
/// `TypedOperations.swift` are written from.
struct OperationModel: Sendable {
    /// A parameter, resolved from `components/parameters` where it is a `$ref`.
    struct Parameter: Sendable {
        var name: String
        /// `path`, `query` or `header`.
        var location: String
        var required: Bool
        /// The JSON type of its schema (`string`, `integer`, `boolean`, `array`), if it says one.
        var schemaType: String?
        var description: String?
    }

    /// One content type of a request body or an answer.
    struct Content: Sendable {
        var contentType: String
        /// The Swift type of the schema when the schema is a `$ref` to `components/schemas`; nil for raw bytes.
        var typeName: String?
        /// The description of that schema.
        var schemaDescription: String?
    }

    /// A success answer (2xx).
    struct Response: Sendable {
        var status: Int
        var description: String?
        /// Sorted by content type; empty for an answer without a body.
        var content: [Content]
    }

    var id: String
    /// The first of the contract's tags: the section of the API.
    var tag: String?
    /// Lower case, as the contract's path item has it: `get`, `post` …
    var method: String
    /// As the contract has it: `/v2/restaurants/{restaurant_id}/orders`, `/oauth/token`.
    var path: String
    var summary: String?
    var description: String?
    /// In the contract's order.
    var parameters: [Parameter]
    /// Sorted by content type; empty without a body.
    var requestBody: [Content]
    var requestBodyDescription: String?
    /// Sorted by status.
    var successes: [Response]
    /// The OAuth scopes of the contract's `security`.
    var scopes: [String]
    /// `x-staff-session`: `required` or `optional` when a staff session is involved.
    var staffSession: String?
    /// `x-client-method`: a method of the client serves the operation (OAuth, the connection, staff sign-in, the stream).
    var servedByClientMethod: Bool

    /// Whether the path sits at the root (`/oauth/…`, `/.well-known/…`) rather than under `/v2`.
    var isRoot: Bool { !path.hasPrefix("/v2/") }
    /// The path relative to `/v2`, or the whole path at the root.
    var relativePath: String { isRoot ? path : String(path.dropFirst(3)) }
    var upperMethod: String { method.uppercased() }

    static let methods = ["get", "put", "post", "patch", "delete"]

    /// Every operation, by path and then by method (get, put, post, patch, delete).
    static func all(in contract: Contract) throws -> [OperationModel] {
        guard let paths = contract.root["paths"]?.object else { throw CodegenError("the contract has no paths") }
        var result: [OperationModel] = []
        for path in paths.keys.sorted() {
            for method in methods {
                guard let op = paths[path]?[method] else { continue }
                result.append(try OperationModel(method: method, path: path, op, contract: contract))
            }
        }
        return result
    }

    private init(method: String, path: String, _ op: JSONNode, contract: Contract) throws {
        let place = "\(method.uppercased()) \(path)"
        guard let id = op["operationId"]?.string else { throw CodegenError("\(place): no operationId") }
        self.id = id
        self.method = method
        self.path = path
        tag = op["tags"]?.array?.first?.string
        summary = op["summary"]?.string
        description = op["description"]?.string
        parameters = try (op["parameters"]?.array ?? []).map { raw in
            let parameter = try contract.resolve(raw, context: id)
            guard let name = parameter["name"]?.string, let location = parameter["in"]?.string else {
                throw CodegenError("\(id): a parameter without name or in")
            }
            return Parameter(name: name, location: location, required: parameter["required"]?.bool ?? false,
                             schemaType: parameter["schema"]?["type"]?.string, description: parameter["description"]?.string)
        }
        requestBody = try Self.content(op["requestBody"]?["content"], contract: contract, context: id)
        requestBodyDescription = op["requestBody"]?["description"]?.string
        var successes: [Response] = []
        for (code, response) in op["responses"]?.object ?? [:] {
            guard let status = Int(code), (200..<300).contains(status) else { continue }
            successes.append(Response(status: status, description: response["description"]?.string,
                                      content: try Self.content(response["content"], contract: contract, context: id)))
        }
        self.successes = successes.sorted { $0.status < $1.status }
        scopes = op["security"]?.array?.first?["oauth2"]?.array?.compactMap(\.string) ?? []
        staffSession = op["x-staff-session"]?.string
        servedByClientMethod = op["x-client-method"] != nil
    }

    private static func content(_ node: JSONNode?, contract: Contract, context: String) throws -> [Content] {
        let media = node?.object ?? [:]
        return try media.keys.sorted().map { contentType in
            guard let target = media[contentType]?["schema"]?["$ref"]?.string else {
                return Content(contentType: contentType, typeName: nil, schemaDescription: nil)
            }
            let schema = try contract.resolve(media[contentType]!["schema"]!, context: context)
            return Content(contentType: contentType, typeName: Contract.typeName(ofRef: target),
                           schemaDescription: schema["description"]?.string)
        }
    }

    /// The content of a type, if the body or answer has it.
    static func content(_ contentType: String, in list: [Content]) -> Content? {
        list.first { $0.contentType == contentType }
    }
}
