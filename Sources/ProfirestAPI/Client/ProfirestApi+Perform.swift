import Foundation

extension ProfirestApi {
    /// Encodes the body, runs the request (`execute`) and decodes the answer as `T`: the way in for most requests,
    /// though not all (see the top of ProfirestApi.swift).
    func perform<T: Decodable>(
        _ method: String, path: String, query: [String: QueryValue], body: RequestBody?, options: RequestOptions,
        as type: T.Type
    ) async throws -> T {
        let response = try await execute(method, path: path, query: query, body: try body?.encoded(), options: options)
        return try ResponseDecoding.decode(T.self, from: response, errors: errorFactory)
    }

    /// Builds the request (URL, query, body, headers) and runs it through the pipeline.
    func execute(
        _ method: String, path: String, query: [String: QueryValue] = [:], body: (data: Data, contentType: String)?,
        options: RequestOptions
    ) async throws -> APIResponse {
        let request = try outgoing(method, path: path, query: query, body: body, options: options)
        return try await pipeline.execute(request, options: options)
    }

    /// The request as the pipeline takes it: the resolved URL with its query, the body, and the headers of
    /// the options (tokens excepted: the pipeline adds them per attempt).
    func outgoing(
        _ method: String, path: String, query: [String: QueryValue], body: (data: Data, contentType: String)?,
        options: RequestOptions
    ) throws -> OutgoingRequest {
        let base = try self.base.get()
        let method = method.uppercased()
        let target = try RequestTarget.resolve(path, query: options.query.merging(query) { $1 }, base: base)
        var headers: [String: String] = ["Accept": options.accept ?? "application/json", "User-Agent": LibraryVersion.userAgent]
        // nil sends none: the default transport also keeps Linux URLSession from adding one (URLSessionTransport).
        if let language = self.options.language { headers["Accept-Language"] = language }
        if let body { headers["Content-Type"] = options.contentType ?? body.contentType }
        if let ifMatch = options.ifMatch { headers["If-Match"] = ifMatch }
        if let ifNoneMatch = options.ifNoneMatch { headers["If-None-Match"] = ifNoneMatch }
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
        return OutgoingRequest(method: method, target: target, headers: headers, body: body?.data)
    }

    /// Encodes a model body once, as sorted-key JSON.
    func encodedBody<B: Encodable>(_ body: B) throws -> (data: Data, contentType: String) {
        if B.self == Data.self {
            throw ProfirestUsageError(
                "pass raw bytes as body: .data(bytes, contentType: \"application/zip\") so they are not sent as a base64 JSON string")
        }
        do {
            return (try JSONCoding.encode(body), "application/json")
        } catch {
            throw ProfirestUsageError("the body of type \(B.self) cannot be encoded as JSON: \(error)")
        }
    }
}
