import Foundation

// The request methods. The result type comes from the annotation (`let x: Model = try await api.get(…)`) or
// `as:`; `Data` gives the raw bytes, `JSONValue` any JSON, an optional `nil` for 204. Without a result type
// the `@discardableResult` variants return `JSONValue?`, so a call whose result is unused compiles quietly.
// Errors are `ProfirestAPIError` (API), `ProfirestUsageError` (misuse, nothing sent) or `CancellationError`.

extension ProfirestApi {
    // MARK: GET

    /// GET, decoded as `T`. Usage: `let catalog: Catalog = try await api.get("/restaurants/11/catalog")`
    public func get<T: Decodable>(_ path: String, as type: T.Type = T.self, options: RequestOptions = .init()) async throws -> T {
        try await perform("GET", path: path, query: [:], body: nil, options: options, as: T.self)
    }

    /// GET as JSON (nil for an empty body). Usage: `let connection = try await api.get("/connection")`
    @discardableResult
    public func get(_ path: String, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await perform("GET", path: path, query: [:], body: nil, options: options, as: JSONValue?.self)
    }

    /// GET the raw bytes; nil for an empty body. Usage: `let bytes = try await api.getData("/restaurants/11/backups/b1/content")`
    public func getData(_ path: String, options: RequestOptions = .init()) async throws -> Data? {
        try await perform("GET", path: path, query: [:], body: nil, options: options, as: Data?.self)
    }

    // MARK: POST

    /// POST, decoded as `T`. Usage: `let r: Tab = try await api.post("/restaurants/11/tabs", body: ["name": "Stůl 4"])`
    public func post<T: Decodable>(
        _ path: String, body: RequestBody? = nil, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> T {
        try await perform("POST", path: path, query: [:], body: body, options: options, as: T.self)
    }

    /// POST a model, decoded as `T`. Usage: `let punch: AttendancePunch = try await api.post(path, body: punchCreate)`
    public func post<T: Decodable, B: Encodable>(
        _ path: String, body: B, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> T {
        try await send(model: "POST", path, body: body, options: options, as: T.self)
    }

    /// POST, the answer as JSON. Usage: `try await api.post("/restaurants/\(rid)/backups", body: .data(zip, contentType: "application/zip"))`
    @discardableResult
    public func post(_ path: String, body: RequestBody? = nil, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await perform("POST", path: path, query: [:], body: body, options: options, as: JSONValue?.self)
    }

    /// POST a model, the answer as JSON. Usage: `try await api.post("/restaurants/\(rid)/quotes", body: quote)`
    @discardableResult
    public func post<B: Encodable>(_ path: String, body: B, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await send(model: "POST", path, body: body, options: options, as: JSONValue?.self)
    }

    // MARK: PUT

    /// PUT, decoded as `T`. Usage: `let c: Customer = try await api.put("/customers/c1", body: ["name": "Jana"])`
    public func put<T: Decodable>(
        _ path: String, body: RequestBody? = nil, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> T {
        try await perform("PUT", path: path, query: [:], body: body, options: options, as: T.self)
    }

    /// PUT a model, decoded as `T`. Usage: `let c: Customer = try await api.put("/customers/c1", body: update)`
    public func put<T: Decodable, B: Encodable>(
        _ path: String, body: B, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> T {
        try await send(model: "PUT", path, body: body, options: options, as: T.self)
    }

    /// PUT, the answer as JSON. Usage: `try await api.put("/customers/c1", body: ["name": "Jana"])`
    @discardableResult
    public func put(_ path: String, body: RequestBody? = nil, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await perform("PUT", path: path, query: [:], body: body, options: options, as: JSONValue?.self)
    }

    /// PUT a model, the answer as JSON. Usage: `try await api.put("/customers/c1", body: update)`
    @discardableResult
    public func put<B: Encodable>(_ path: String, body: B, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await send(model: "PUT", path, body: body, options: options, as: JSONValue?.self)
    }

    // MARK: PATCH

    /// PATCH, decoded as `T`. Usage: `let c: Customer = try await api.patch("/customers/c1", body: ["name": "Jana"])`
    public func patch<T: Decodable>(
        _ path: String, body: RequestBody? = nil, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> T {
        try await perform("PATCH", path: path, query: [:], body: body, options: options, as: T.self)
    }

    /// PATCH a model, decoded as `T`. Usage: `let c: Customer = try await api.patch("/customers/c1", body: update)`
    public func patch<T: Decodable, B: Encodable>(
        _ path: String, body: B, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> T {
        try await send(model: "PATCH", path, body: body, options: options, as: T.self)
    }

    /// PATCH, the answer as JSON. Usage: `try await api.patch("/customers/c1", body: ["name": "Jana"], options: .init(ifMatch: etag))`
    @discardableResult
    public func patch(_ path: String, body: RequestBody? = nil, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await perform("PATCH", path: path, query: [:], body: body, options: options, as: JSONValue?.self)
    }

    /// PATCH a model, the answer as JSON. Usage: `try await api.patch("/customers/c1", body: update)`
    @discardableResult
    public func patch<B: Encodable>(_ path: String, body: B, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await send(model: "PATCH", path, body: body, options: options, as: JSONValue?.self)
    }

    // MARK: DELETE

    /// DELETE, decoded as `T`. Usage: `let gone: Tab = try await api.delete("/restaurants/11/tabs/t1")`
    public func delete<T: Decodable>(_ path: String, as type: T.Type = T.self, options: RequestOptions = .init()) async throws -> T {
        try await perform("DELETE", path: path, query: [:], body: nil, options: options, as: T.self)
    }

    /// DELETE, the answer as JSON (nil for 204). Usage: `try await api.delete("/restaurants/11/tabs/t1")`
    @discardableResult
    public func delete(_ path: String, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await perform("DELETE", path: path, query: [:], body: nil, options: options, as: JSONValue?.self)
    }

    // MARK: Any method

    /// Any method, decoded as `T`. Usage: `let r: Order = try await api.request("POST", "/restaurants/11/orders", body: ["quote_id": "q1"])`
    public func request<T: Decodable>(
        _ method: String, _ path: String, body: RequestBody? = nil, as type: T.Type = T.self,
        options: RequestOptions = .init()
    ) async throws -> T {
        try await perform(method, path: path, query: [:], body: body, options: options, as: T.self)
    }

    /// Any method with a model body, decoded as `T`. Usage: `let r: Order = try await api.request("POST", path, body: orderCreate)`
    public func request<T: Decodable, B: Encodable>(
        _ method: String, _ path: String, body: B, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> T {
        try await send(model: method, path, body: body, options: options, as: T.self)
    }

    /// Any method, the answer as JSON. Usage: `try await api.request("DELETE", "/restaurants/11/tabs/t1")`
    @discardableResult
    public func request(
        _ method: String, _ path: String, body: RequestBody? = nil, options: RequestOptions = .init()
    ) async throws -> JSONValue? {
        try await perform(method, path: path, query: [:], body: body, options: options, as: JSONValue?.self)
    }

    /// Any method with a model body, the answer as JSON. Usage: `try await api.request("PUT", path, body: update)`
    @discardableResult
    public func request<B: Encodable>(
        _ method: String, _ path: String, body: B, options: RequestOptions = .init()
    ) async throws -> JSONValue? {
        try await send(model: method, path, body: body, options: options, as: JSONValue?.self)
    }

    // MARK: Status, headers and bytes

    /// Any method; the successful response with status, headers and bytes (ETag, Location…).
    /// Usage: `let r = try await api.send("GET", "/customers/\(id)"); let etag = r.header("ETag")`
    @discardableResult
    public func send(
        _ method: String, _ path: String, body: RequestBody? = nil, options: RequestOptions = .init()
    ) async throws -> APIResponse {
        let response = try await execute(method, path: path, body: try body?.encoded(), options: options)
        return APIResponse(status: response.status, headers: response.headers, data: response.data)
    }

    /// Any method with a model body; the successful response with status, headers and bytes.
    /// Usage: `let r = try await api.send("POST", "/restaurants/11/orders", body: orderCreate); r.header("Location")`
    @discardableResult
    public func send<B: Encodable>(
        _ method: String, _ path: String, body: B, options: RequestOptions = .init()
    ) async throws -> APIResponse {
        let response = try await execute(method, path: path, body: try encodedBody(body), options: options)
        return APIResponse(status: response.status, headers: response.headers, data: response.data)
    }

    private func send<T: Decodable, B: Encodable>(
        model method: String, _ path: String, body: B, options: RequestOptions, as type: T.Type
    ) async throws -> T {
        let response = try await execute(method, path: path, body: try encodedBody(body), options: options)
        return try ResponseDecoding.decode(T.self, from: response, errors: errorFactory)
    }
}
