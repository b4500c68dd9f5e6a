/// What the contract says about one operation: its method, path, parameters, body and answers.
/// The generated ``Operations`` enum has one for every operation.
///
/// ```swift
/// Operations.createAttendancePunch.path  // "/restaurants/{restaurant_id}/attendance/punches"
/// ```
public struct OperationDescriptor: Sendable, Hashable {
    /// The contract's operationId.
    public let id: String
    /// The contract's tag (the section of the API).
    public let tag: String
    /// The HTTP method, upper case.
    public let method: String
    /// The path template, relative to `/v2` unless ``isRoot``.
    public let path: String
    /// Whether the path sits at the root (`/oauth/…`, `/.well-known/…`) rather than under `/v2`.
    public let isRoot: Bool
    /// Names of the path parameters, in the order they appear in the contract.
    public let pathParameters: [String]
    /// Names of the query parameters.
    public let queryParameters: [String]
    /// Names of the header parameters.
    public let headerParameters: [String]
    /// Content types the request body may have; empty when there is no body.
    public let requestContentTypes: [String]
    /// The Swift type of the request body (`"Data"` for raw bytes), or nil.
    public let requestBody: String?
    /// Success statuses and the Swift type of their body (`"Void"` for none, `"Data"` for bytes).
    public let responses: [Int: String]
    /// OAuth scopes the operation needs.
    public let scopes: [String]
    /// `"required"` when the operation needs a signed-in employee.
    public let staffSession: String?

    /// Creates a descriptor; the generated ``Operations`` are the ones to use.
    public init(id: String, tag: String, method: String, path: String, isRoot: Bool, pathParameters: [String],
                queryParameters: [String], headerParameters: [String], requestContentTypes: [String], requestBody: String?,
                responses: [Int: String], scopes: [String], staffSession: String?) {
        self.id = id
        self.tag = tag
        self.method = method
        self.path = path
        self.isRoot = isRoot
        self.pathParameters = pathParameters
        self.queryParameters = queryParameters
        self.headerParameters = headerParameters
        self.requestContentTypes = requestContentTypes
        self.requestBody = requestBody
        self.responses = responses
        self.scopes = scopes
        self.staffSession = staffSession
    }
}
