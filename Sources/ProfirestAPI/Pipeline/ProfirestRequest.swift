import Foundation

/// One call of the API as a value — method, path, query, body, options and the type its answer decodes to — which
/// `get`, `post`, `request`, `send`, the pages and the event feed build and hand to the core.
///
/// The result type decides what comes back: a model is decoded, `JSONValue?` gives any JSON (nil for an empty body),
/// `Data` the bytes.
struct ProfirestRequest<Response: Decodable>: Sendable {
    /// The HTTP method, such as `GET` or `POST`.
    var method: String
    /// The path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    var path: String
    /// Query parameters, on top of `options.query`.
    var query: [String: QueryValue]
    /// The body, nil for none.
    var body: RequestBody?
    /// What this one call does differently: Idempotency-Key, staff token, retries, timeout, headers…
    var options: RequestOptions

    /// A call of the API whose answer decodes as `Response`.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, such as `GET` or `POST`.
    ///   - path: the path relative to `/v2`, such as `/restaurants/11/orders`.
    ///   - query: query parameters, on top of `options.query`.
    ///   - body: the body: a dictionary or array literal, `.data(bytes, contentType:)`, `.text(…)`, or nil.
    ///   - options: what this one call does differently.
    ///   - type: the type of the answer; left out, the annotation gives it.
    init(
        _ method: String, _ path: String, query: [String: QueryValue] = [:], body: RequestBody? = nil,
        options: RequestOptions = .init(), as type: Response.Type = Response.self
    ) {
        self.method = method.uppercased()
        self.path = path
        self.query = query
        self.body = body
        self.options = options
    }
}

extension ProfirestRequest {
    /// The call as the core sends it: the path resolved against the API's address with the query, the body encoded
    /// once, the Idempotency-Key chosen once (so every retry repeats it), and the headers of the options — the tokens
    /// excepted, which the core adds to each attempt.
    func outgoing(base: APIBase, language: String?, now: Date) throws -> OutgoingRequest {
        let target = try RequestTarget.resolve(path, query: options.query.merging(query) { $1 }, base: base)
        var headers = OutgoingRequest.standardHeaders(accept: options.accept ?? "application/json", language: language)
        let encoded = try body?.encoded()
        if let encoded { headers["Content-Type"] = options.contentType ?? encoded.contentType }
        if let ifMatch = options.ifMatch { headers["If-Match"] = ifMatch }
        if let ifNoneMatch = options.ifNoneMatch { headers["If-None-Match"] = ifNoneMatch }
        if let key = options.idempotencyKey.value(method: method, now: now) {
            headers[RequestOptions.IdempotencyKey.header] = key
        }
        for (name, value) in options.headers {
            let lower = name.lowercased()
            if lower == "authorization" || lower == "profirest-staff-token" {
                throw ProfirestUsageError(
                    "set \(name) through the options auth: .bearer(…) or staff: .token(…), not headers: the library guards where tokens go")
            }
            // Replace a library header of another spelling instead of sending it twice.
            if let existing = headers.keys.first(where: { $0.lowercased() == lower }) { headers[existing] = nil }
            headers[name] = value
        }
        return OutgoingRequest(method: method, target: target, headers: headers, body: encoded?.data)
    }
}

extension Core {
    /// Sends an API call by the `apiCall` policy and returns its successful answer as it came.
    func response<T>(for request: ProfirestRequest<T>) async throws -> APIResponse {
        let outgoing = try request.outgoing(base: try base.get(), language: language, now: clock())
        return try await send(outgoing, policy: .apiCall(request.options, retries: retries))
    }

    /// Sends an API call and decodes its answer as the request's type.
    func send<T: Decodable>(_ request: ProfirestRequest<T>) async throws -> T {
        let response = try await response(for: request)
        return try ResponseDecoding.decode(T.self, from: response, errors: self.errors())
    }
}
