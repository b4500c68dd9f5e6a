import Foundation

// The request methods. The result type comes from the annotation (`let x: Model = try await api.get(…)`) or
// `as:`; `Data` gives the raw bytes, `JSONValue` any JSON, an optional `nil` for 204. Without a result type
// the `@discardableResult` variants return `JSONValue?`, so a call whose result is unused compiles quietly.
// What each can throw is explained once, in the article RequestsAndErrors ("Errors every request can throw").

extension ProfirestApi {
    // MARK: GET

    /// Reads a resource and decodes it as the type you ask for; failures are `ProfirestAPIError`s with a code.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - type: the type to decode the answer as; left out, the annotation gives it.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer decoded as `T`.
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// let catalog: Catalog = try await api.get("/restaurants/11/catalog")
    /// ```
    public func get<T: Decodable>(_ path: String, as type: T.Type = T.self, options: RequestOptions = .init()) async throws -> T {
        try await core.send(ProfirestRequest("GET", path, options: options, as: T.self))
    }

    /// Reads a resource as JSON, for a quick look or a shape without a model; nil when the answer has no body.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer as JSON, or nil when it has no body (such as a 204).
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// let connection = try await api.get("/connection")
    /// ```
    @discardableResult
    public func get(_ path: String, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await core.send(ProfirestRequest("GET", path, options: options, as: JSONValue?.self))
    }

    /// Downloads a resource's raw bytes (a backup, an export) without decoding; nil when the answer has no body.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the body's bytes as they came, or nil when it is empty.
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// let bytes = try await api.getData("/restaurants/11/backups/b1/content")
    /// ```
    public func getData(_ path: String, options: RequestOptions = .init()) async throws -> Data? {
        try await core.send(ProfirestRequest("GET", path, options: options, as: Data?.self))
    }

    // MARK: POST

    /// Creates something and decodes the answer as `T`; an Idempotency-Key makes a retry safe to repeat.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a dictionary or array literal (sent as JSON), or `.data` or `.text` with a content type; nil sends
    ///     none.
    ///   - type: the type to decode the answer as; left out, the annotation gives it.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer decoded as `T`.
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// let r: Tab = try await api.post("/restaurants/11/tabs", body: ["name": "Stůl 4"])
    /// ```
    public func post<T: Decodable>(
        _ path: String, body: RequestBody? = nil, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> T {
        try await core.send(ProfirestRequest("POST", path, body: body, options: options, as: T.self))
    }

    /// Creates something from a model (sent as JSON) and decodes the answer as `T`, with an Idempotency-Key.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a model, sent as JSON.
    ///   - type: the type to decode the answer as; left out, the annotation gives it.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer decoded as `T`.
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// let punch: AttendancePunch = try await api.post(path, body: punchCreate)
    /// ```
    public func post<T: Decodable, B: Encodable>(
        _ path: String, body: B, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> T {
        try await core.send(ProfirestRequest("POST", path, body: try .model(body), options: options, as: T.self))
    }

    /// Creates something and returns the answer as JSON; an Idempotency-Key makes a retry safe to repeat.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a dictionary or array literal (sent as JSON), or `.data` or `.text` with a content type; nil sends
    ///     none.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer as JSON, or nil when it has no body (such as a 204).
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// try await api.post("/restaurants/\(rid)/backups", body: .data(zip, contentType: "application/zip"))
    /// ```
    @discardableResult
    public func post(_ path: String, body: RequestBody? = nil, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await core.send(ProfirestRequest("POST", path, body: body, options: options, as: JSONValue?.self))
    }

    /// Creates something from a model (sent as JSON) and returns the answer as JSON, with an Idempotency-Key.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a model, sent as JSON.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer as JSON, or nil when it has no body (such as a 204).
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// try await api.post("/restaurants/\(rid)/quotes", body: quote)
    /// ```
    @discardableResult
    public func post<B: Encodable>(_ path: String, body: B, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await core.send(ProfirestRequest("POST", path, body: try .model(body), options: options, as: JSONValue?.self))
    }

    // MARK: PUT

    /// Replaces a resource and decodes the answer as `T`; retried by the rules, as PUT is idempotent.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a dictionary or array literal (sent as JSON), or `.data` or `.text` with a content type; nil sends
    ///     none.
    ///   - type: the type to decode the answer as; left out, the annotation gives it.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer decoded as `T`.
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// let c: Customer = try await api.put("/customers/c1", body: ["name": "Jana"])
    /// ```
    public func put<T: Decodable>(
        _ path: String, body: RequestBody? = nil, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> T {
        try await core.send(ProfirestRequest("PUT", path, body: body, options: options, as: T.self))
    }

    /// Replaces a resource with a model (sent as JSON) and decodes the answer as `T`.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a model, sent as JSON.
    ///   - type: the type to decode the answer as; left out, the annotation gives it.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer decoded as `T`.
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// let c: Customer = try await api.put("/customers/c1", body: update)
    /// ```
    public func put<T: Decodable, B: Encodable>(
        _ path: String, body: B, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> T {
        try await core.send(ProfirestRequest("PUT", path, body: try .model(body), options: options, as: T.self))
    }

    /// Replaces a resource and returns the answer as JSON.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a dictionary or array literal (sent as JSON), or `.data` or `.text` with a content type; nil sends
    ///     none.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer as JSON, or nil when it has no body (such as a 204).
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// try await api.put("/customers/c1", body: ["name": "Jana"])
    /// ```
    @discardableResult
    public func put(_ path: String, body: RequestBody? = nil, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await core.send(ProfirestRequest("PUT", path, body: body, options: options, as: JSONValue?.self))
    }

    /// Replaces a resource with a model (sent as JSON) and returns the answer as JSON.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a model, sent as JSON.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer as JSON, or nil when it has no body (such as a 204).
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// try await api.put("/customers/c1", body: update)
    /// ```
    @discardableResult
    public func put<B: Encodable>(_ path: String, body: B, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await core.send(ProfirestRequest("PUT", path, body: try .model(body), options: options, as: JSONValue?.self))
    }

    // MARK: PATCH

    /// Changes part of a resource and decodes the answer as `T`; pair it with `ifMatch` to avoid lost updates.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a dictionary or array literal (sent as JSON), or `.data` or `.text` with a content type; nil sends
    ///     none.
    ///   - type: the type to decode the answer as; left out, the annotation gives it.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer decoded as `T`.
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// let c: Customer = try await api.patch("/customers/c1", body: ["name": "Jana"])
    /// ```
    public func patch<T: Decodable>(
        _ path: String, body: RequestBody? = nil, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> T {
        try await core.send(ProfirestRequest("PATCH", path, body: body, options: options, as: T.self))
    }

    /// Changes part of a resource from a model (sent as JSON) and decodes the answer as `T`.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a model, sent as JSON.
    ///   - type: the type to decode the answer as; left out, the annotation gives it.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer decoded as `T`.
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// let c: Customer = try await api.patch("/customers/c1", body: update)
    /// ```
    public func patch<T: Decodable, B: Encodable>(
        _ path: String, body: B, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> T {
        try await core.send(ProfirestRequest("PATCH", path, body: try .model(body), options: options, as: T.self))
    }

    /// Changes part of a resource and returns the answer as JSON; pair it with `ifMatch` to avoid lost updates.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a dictionary or array literal (sent as JSON), or `.data` or `.text` with a content type; nil sends
    ///     none.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer as JSON, or nil when it has no body (such as a 204).
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// try await api.patch("/customers/c1", body: ["name": "Jana"], options: .init(ifMatch: etag))
    /// ```
    @discardableResult
    public func patch(_ path: String, body: RequestBody? = nil, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await core.send(ProfirestRequest("PATCH", path, body: body, options: options, as: JSONValue?.self))
    }

    /// Changes part of a resource from a model (sent as JSON) and returns the answer as JSON.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a model, sent as JSON.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer as JSON, or nil when it has no body (such as a 204).
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// try await api.patch("/customers/c1", body: update)
    /// ```
    @discardableResult
    public func patch<B: Encodable>(_ path: String, body: B, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await core.send(ProfirestRequest("PATCH", path, body: try .model(body), options: options, as: JSONValue?.self))
    }

    // MARK: DELETE

    /// Deletes a resource and decodes the answer as `T`.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - type: the type to decode the answer as; left out, the annotation gives it.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer decoded as `T`.
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// let gone: Tab = try await api.delete("/restaurants/11/tabs/t1")
    /// ```
    public func delete<T: Decodable>(_ path: String, as type: T.Type = T.self, options: RequestOptions = .init()) async throws -> T {
        try await core.send(ProfirestRequest("DELETE", path, options: options, as: T.self))
    }

    /// Deletes a resource; the answer as JSON, nil for the usual 204.
    ///
    /// - Parameters:
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer as JSON, or nil when it has no body (such as a 204).
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// try await api.delete("/restaurants/11/tabs/t1")
    /// ```
    @discardableResult
    public func delete(_ path: String, options: RequestOptions = .init()) async throws -> JSONValue? {
        try await core.send(ProfirestRequest("DELETE", path, options: options, as: JSONValue?.self))
    }

    // MARK: Any method

    /// Sends any method and decodes the answer as `T`, for methods and paths the typed calls do not cover.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, such as `POST` or `DELETE`.
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a dictionary or array literal (sent as JSON), or `.data` or `.text` with a content type; nil sends
    ///     none.
    ///   - type: the type to decode the answer as; left out, the annotation gives it.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer decoded as `T`.
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// let r: Order = try await api.request("POST", "/restaurants/11/orders", body: ["quote_id": "q1"])
    /// ```
    public func request<T: Decodable>(
        _ method: String, _ path: String, body: RequestBody? = nil, as type: T.Type = T.self,
        options: RequestOptions = .init()
    ) async throws -> T {
        try await core.send(ProfirestRequest(method, path, body: body, options: options, as: T.self))
    }

    /// Sends any method with a model body (as JSON) and decodes the answer as `T`.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, such as `POST` or `DELETE`.
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a model, sent as JSON.
    ///   - type: the type to decode the answer as; left out, the annotation gives it.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer decoded as `T`.
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// let r: Order = try await api.request("POST", path, body: orderCreate)
    /// ```
    public func request<T: Decodable, B: Encodable>(
        _ method: String, _ path: String, body: B, as type: T.Type = T.self, options: RequestOptions = .init()
    ) async throws -> T {
        try await core.send(ProfirestRequest(method, path, body: try .model(body), options: options, as: T.self))
    }

    /// Sends any method and returns the answer as JSON.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, such as `POST` or `DELETE`.
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a dictionary or array literal (sent as JSON), or `.data` or `.text` with a content type; nil sends
    ///     none.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer as JSON, or nil when it has no body (such as a 204).
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// try await api.request("DELETE", "/restaurants/11/tabs/t1")
    /// ```
    @discardableResult
    public func request(
        _ method: String, _ path: String, body: RequestBody? = nil, options: RequestOptions = .init()
    ) async throws -> JSONValue? {
        try await core.send(ProfirestRequest(method, path, body: body, options: options, as: JSONValue?.self))
    }

    /// Sends any method with a model body (as JSON) and returns the answer as JSON.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, such as `POST` or `DELETE`.
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a model, sent as JSON.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the answer as JSON, or nil when it has no body (such as a 204).
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// try await api.request("PUT", path, body: update)
    /// ```
    @discardableResult
    public func request<B: Encodable>(
        _ method: String, _ path: String, body: B, options: RequestOptions = .init()
    ) async throws -> JSONValue? {
        try await core.send(ProfirestRequest(method, path, body: try .model(body), options: options, as: JSONValue?.self))
    }

    // MARK: Status, headers and bytes

    /// Sends any method and returns the whole successful response, for its status and headers (ETag, Location).
    ///
    /// - Parameters:
    ///   - method: the HTTP method, such as `POST` or `DELETE`.
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a dictionary or array literal (sent as JSON), or `.data` or `.text` with a content type; nil sends
    ///     none.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the successful answer: its status, headers and bytes.
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// let r = try await api.send("GET", "/customers/\(id)"); let etag = r.header("ETag")
    /// ```
    @discardableResult
    public func send(
        _ method: String, _ path: String, body: RequestBody? = nil, options: RequestOptions = .init()
    ) async throws -> APIResponse {
        try await core.response(for: ProfirestRequest(method, path, body: body, options: options, as: JSONValue?.self))
    }

    /// Sends any method with a model body (as JSON) and returns the whole successful response.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, such as `POST` or `DELETE`.
    ///   - path: the path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    ///   - body: a model, sent as JSON.
    ///   - options: what this one request does differently: query, Idempotency-Key, staff token, retries, timeout…
    /// - Returns: the successful answer: its status, headers and bytes.
    /// - Throws: One of the <doc:RequestsAndErrors#Errors-every-request-can-throw>.
    ///
    /// ```swift
    /// let r = try await api.send("POST", "/restaurants/11/orders", body: orderCreate); r.header("Location")
    /// ```
    @discardableResult
    public func send<B: Encodable>(
        _ method: String, _ path: String, body: B, options: RequestOptions = .init()
    ) async throws -> APIResponse {
        try await core.response(for: ProfirestRequest(method, path, body: try .model(body), options: options, as: JSONValue?.self))
    }
}
