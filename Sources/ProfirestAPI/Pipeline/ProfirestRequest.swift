import Foundation

/// One call of the API as a value — method, path, query, body, options and the type its answer decodes to — so a
/// call can be built in one place and sent with `api.send(_:)`; `get`, `post`, `put`, `patch`, `delete` and
/// `send(_:_:body:options:)` build one for you.
///
/// The result type decides what comes back: a model is decoded, `JSONValue?` gives any JSON (nil for an empty body),
/// `Data` the bytes.
///
/// ```swift
/// let request = ProfirestRequest<[StaffMember]>("GET", "/restaurants/11/staff", query: ["role": "manager"])
/// let managers = try await api.send(request)
/// ```
public struct ProfirestRequest<Response: Decodable>: Sendable {
    /// The HTTP method, such as `GET` or `POST`.
    public var method: String
    /// The path as the reference writes it, relative to `/v2` (`/restaurants/11/orders`).
    public var path: String
    /// Query parameters, on top of `options.query`.
    public var query: [String: QueryValue]
    /// The body, nil for none.
    public var body: RequestBody?
    /// What this one call does differently: Idempotency-Key, staff token, retries, timeout, headers…
    public var options: RequestOptions

    /// A call of the API whose answer decodes as `Response`.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, such as `GET` or `POST`.
    ///   - path: the path relative to `/v2`, such as `/restaurants/11/orders`.
    ///   - query: query parameters, on top of `options.query`.
    ///   - body: the body: a dictionary or array literal, `.data(bytes, contentType:)`, `.text(…)`, or nil.
    ///   - options: what this one call does differently.
    ///   - type: the type of the answer; left out, the annotation gives it.
    ///
    /// ```swift
    /// let request = ProfirestRequest("DELETE", "/customers/c1", as: JSONValue?.self)
    /// ```
    public init(
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

/// One call ready to go: everything but the per-attempt headers (the tokens) is final.
struct OutgoingRequest: Sendable {
    var method: String
    var target: RequestTarget
    var headers: [String: String]
    var body: Data?
    /// Bodies the library holds in memory can be sent again; a body that cannot be replayed is sent once.
    var replayable: Bool = true
    /// The caller knows that this request, whatever its method, does no harm when the server gets it twice (the
    /// OAuth token and revocation requests, see `OAuthEndpoint`); otherwise `Repetition.safe` decides by method,
    /// Idempotency-Key and If-Match.
    var knownSafeToRepeat: Bool = false
}

extension ProfirestRequest {
    /// The call as the core sends it: the path resolved against the API's address with the query, the body encoded
    /// once, the Idempotency-Key chosen once (so every retry repeats it), and the headers of the options — the tokens
    /// excepted, which the core adds to each attempt.
    func outgoing(base: APIBase, language: String?, now: Date) throws -> OutgoingRequest {
        let target = try RequestTarget.resolve(path, query: options.query.merging(query) { $1 }, base: base)
        var headers: [String: String] = ["Accept": options.accept ?? "application/json", "User-Agent": LibraryVersion.userAgent]
        // nil sends none: the default transport also keeps Linux URLSession from adding one (URLSessionTransport).
        if let language { headers["Accept-Language"] = language }
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

extension RequestBody {
    /// A model as a JSON body, encoded once with sorted keys (the same model, the same bytes).
    static func model<B: Encodable>(_ body: B) throws -> RequestBody {
        if B.self == Data.self {
            throw ProfirestUsageError(
                "pass raw bytes as body: .data(bytes, contentType: \"application/zip\") so they are not sent as a base64 JSON string")
        }
        if let body = body as? RequestBody { return body }
        do {
            return .data(try JSONCoding.encode(body), contentType: "application/json")
        } catch {
            throw ProfirestUsageError("the body of type \(B.self) cannot be encoded as JSON: \(error)")
        }
    }
}

/// Where one call goes: the absolute URL, and whether it is the API's own origin (the only one that gets tokens).
struct RequestTarget: Sendable {
    let url: URL
    let isAPIOrigin: Bool
    let origin: Origin

    /// Resolves a path as the reference writes it: relative to `/v2`; `/oauth/…` and `/.well-known/…` from the
    /// root. An absolute URL of the API's origin is used as it is; one of another origin is sent without
    /// `Authorization` and `Profirest-Staff-Token` (a pre-signed download link, say).
    static func resolve(_ path: String, query: [String: QueryValue], base: APIBase) throws -> RequestTarget {
        let encodedQuery = QueryEncoding.encode(query)
        let lower = path.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            guard let url = URL(string: append(encodedQuery, to: path)) else {
                throw ProfirestUsageError(
                    "\"\(Origin.redactingUserInfo(path))\" is not a valid URL; pass a path such as /restaurants/11")
            }
            if url.user(percentEncoded: true) != nil || url.password(percentEncoded: true) != nil {
                throw ProfirestUsageError(
                    "\"\(Origin.redactingUserInfo(path))\" carries a user name or password; credentials never go in a URL")
            }
            guard let origin = Origin(url) else {
                throw ProfirestUsageError(
                    "\"\(Origin.redactingUserInfo(path))\" is not a valid URL; pass a path such as /restaurants/11")
            }
            return RequestTarget(url: url, isAPIOrigin: origin == base.origin, origin: origin)
        }
        guard path.hasPrefix("/") else {
            throw ProfirestUsageError(
                "the path \"\(path)\" must start with \"/\" and be relative to /v2, e.g. /restaurants/11/catalog")
        }
        if path == "/v2" || path.hasPrefix("/v2/") || path.hasPrefix("/v2?") {
            throw ProfirestUsageError(
                "write paths relative to /v2 as the reference does: \"\(path.dropFirst(3))\" instead of \"\(path)\"")
        }
        let fromRoot = path.hasPrefix("/oauth/") || path.hasPrefix("/.well-known/")
        let full = base.root + (fromRoot ? "" : "/v2") + escapePath(path)
        guard let url = URL(string: append(encodedQuery, to: full)) else {
            throw ProfirestUsageError("the path \"\(path)\" does not make a valid URL")
        }
        return RequestTarget(url: url, isAPIOrigin: true, origin: base.origin)
    }

    private static func append(_ query: String, to url: String) -> String {
        if query.isEmpty { return url }
        return url + (url.contains("?") ? "&" : "?") + query
    }

    /// Percent-encodes what cannot stand in a URL path (spaces, non-ASCII names in ids) and leaves existing
    /// `%XX` escapes, `/` and a query the caller wrote after `?` alone.
    static func escapePath(_ path: String) -> String {
        var out = ""
        out.reserveCapacity(path.utf8.count)
        var inQuery = false
        for byte in path.utf8 {
            if byte == UInt8(ascii: "?") { inQuery = true }
            if isAllowed(byte, inQuery: inQuery) {
                out.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    private static func isAllowed(_ byte: UInt8, inQuery: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"),
            UInt8(ascii: "%"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: ":"),
            UInt8(ascii: "@"):
            return true
        case UInt8(ascii: "&"), UInt8(ascii: "="), UInt8(ascii: "?"), UInt8(ascii: "+"):
            // Meaningful in a query the caller wrote; in a path `+` is literal, and `&`/`=` are allowed there too.
            return inQuery || byte != UInt8(ascii: "?")
        default:
            return false
        }
    }
}

/// Builds a query string: keys in sorted order (the same request always has the same URL, which keeps logs and
/// caches comparable), empty values left out, arrays joined with commas, and everything but RFC 3986 unreserved
/// characters percent-encoded — `+` included, which `URLComponents` leaves alone and servers read as a space.
enum QueryEncoding {
    static func encode(_ query: [String: QueryValue]) -> String {
        var parts: [String] = []
        parts.reserveCapacity(query.count)
        for key in query.keys.sorted() {
            guard let value = query[key]?.encoded(escape: escape), !value.isEmpty else { continue }
            parts.append(escape(key) + "=" + value)
        }
        return parts.joined(separator: "&")
    }

    static func escape(_ text: String) -> String {
        PercentEncoding.rfc3986(text)
    }
}

/// Percent-encoding in the two flavours the library needs, in one place. Both encode `+`: `URLComponents` leaves it
/// bare and servers read a bare `+` in a query or form as a space.
enum PercentEncoding {
    /// RFC 3986: only unreserved characters (letters, digits, `-._~`) stay; for path segments (an id with `/` stays
    /// one segment) and query components.
    static func rfc3986(_ text: String) -> String {
        encode(text, spaceAsPlus: false) { byte in
            isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "~")
        }
    }

    /// `application/x-www-form-urlencoded` (WHATWG URL standard): letters, digits and `*-._` stay, a space is `+`.
    static func form(_ text: String) -> String {
        encode(text, spaceAsPlus: true) { byte in
            isAlphanumeric(byte) || byte == UInt8(ascii: "*") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "_")
        }
    }

    /// A form body `a=1&b=2`, keys sorted so a request is reproducible in tests and logs.
    static func formBody(_ fields: [String: String]) -> String {
        fields.sorted { $0.key < $1.key }.map { form($0.key) + "=" + form($0.value) }.joined(separator: "&")
    }

    private static func encode(_ text: String, spaceAsPlus: Bool, keeping: (UInt8) -> Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if keeping(byte) {
                out.unicodeScalars.append(UnicodeScalar(byte))
            } else if spaceAsPlus, byte == UInt8(ascii: " ") {
                out += "+"
            } else {
                out += "%" + hex(byte >> 4) + hex(byte & 0xF)
            }
        }
        return out
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func hex(_ nibble: UInt8) -> String {
        String(UnicodeScalar(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10))
    }
}

extension RequestOptions.IdempotencyKey {
    static let header = "Idempotency-Key"

    /// Where a request gets its `Idempotency-Key`, chosen once per call (in `outgoing`) so every automatic retry
    /// repeats it:
    ///
    /// - POST with `.auto` (the default): a new UUIDv7 — also when `retries` is 0, because a caller or a proxy may
    ///   still repeat the request.
    /// - `.key(…)` or a string literal: the caller's key, on any method but GET/HEAD.
    /// - `.none`: no key.
    /// - GET and HEAD never carry one: they are safe to repeat anyway and the server ignores it there.
    func value(method: String, now: Date) -> String? {
        if method == "GET" || method == "HEAD" { return nil }
        switch self {
        case .none: return nil
        case .key(let key): return key
        case .auto: return method == "POST" ? UUIDv7.make(now: now) : nil
        }
    }
}

/// Turns a successful response into the caller's type: `Data` gets the bytes, `JSONValue` any JSON, an optional
/// `nil` for an empty body (204), a model is decoded — and a body that does not fit becomes `invalid_response`
/// naming the type and the JSON path, instead of a bare `DecodingError`.
enum ResponseDecoding {
    static func decode<T: Decodable>(
        _ type: T.Type, from response: APIResponse, errors: @autoclosure () -> ErrorFactory
    ) throws -> T {
        if T.self == Data.self { return response.data as! T }
        if T.self == Data?.self { return (response.data.isEmpty ? nil : response.data) as Data? as! T }
        if response.data.isEmpty {
            if let none = (T.self as? OptionalMarker.Type)?.emptyValue { return none as! T }
            if T.self == JSONValue.self { return JSONValue.null as! T }
            throw errors().make(
                ErrorCode.invalidResponse, status: response.status,
                detail: "expected \(T.self) but the response (HTTP \(response.status)) has no body",
                requestID: response.header("Profirest-Request-Id"))
        }
        do {
            return try JSONCoding.decoder.decode(T.self, from: response.data)
        } catch let error as DecodingError {
            var reason = describe(error)
            // A number no Swift number holds fails the whole document: set aside, it may be one the model skips.
            switch OversizedNumbers.retry(T.self, from: response.data) {
            case .success(let value)?: return value
            case .failure(let second)?:
                reason = OversizedNumbers.explain(second, in: response.data).map { "at \(jsonPath($0.path)): \($0.reason)" }
                    ?? describe(second)
            case nil: break
            }
            let type = response.header("Content-Type") ?? "no content type"
            throw errors().make(
                ErrorCode.invalidResponse, status: response.status,
                detail: "the response (HTTP \(response.status), \(type)) is not \(T.self): \(reason)",
                requestID: response.header("Profirest-Request-Id"))
        }
    }

    /// `at $.items[0].price: expected Int, found a string`-style text; never the value itself (it might be secret).
    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(let type, let context):
            return "at \(jsonPath(context.codingPath)): expected \(type) (\(context.debugDescription))"
        case .valueNotFound(let type, let context):
            return "at \(jsonPath(context.codingPath)): expected \(type), found null"
        case .keyNotFound(let key, let context):
            return "at \(jsonPath(context.codingPath + [key])): the member is missing"
        case .dataCorrupted(let context):
            return "at \(jsonPath(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    static func jsonPath(_ path: [CodingKey]) -> String {
        var text = "$"
        for key in path {
            if let index = key.intValue, key.stringValue.hasPrefix("Index") || key.stringValue == "\(index)" {
                text += "[\(index)]"
            } else {
                text += "." + key.stringValue
            }
        }
        return text
    }
}

/// Lets the decoder answer `nil` for an empty body when the caller asked for an optional.
protocol OptionalMarker {
    static var emptyValue: Any { get }
}

extension Optional: OptionalMarker {
    static var emptyValue: Any { Self.none as Any }
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

/// A request body: JSON from a dictionary or array literal, or raw bytes or text with their content type.
/// (Any `Encodable` model can be passed directly as `body:` as well.)
///
/// ```swift
/// try await api.post("/restaurants/\(rid)/backups", body: .data(zipData, contentType: "application/zip"))
/// ```
public struct RequestBody: Sendable, Hashable, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
    enum Content: Sendable, Hashable {
        case json(JSONValue)
        case raw(Data, contentType: String)
    }

    let content: Content

    /// A JSON body.
    ///
    /// - Parameter value: the JSON to send.
    /// - Returns: a body sent as `application/json`.
    ///
    /// ```swift
    /// body: .json(value)
    /// ```
    public static func json(_ value: JSONValue) -> RequestBody { RequestBody(content: .json(value)) }

    /// Raw bytes sent as they are.
    ///
    /// - Parameters:
    ///   - bytes: the bytes, sent as they are.
    ///   - contentType: their media type, such as `application/zip`.
    /// - Returns: a body of those bytes with that content type.
    ///
    /// ```swift
    /// body: .data(zipData, contentType: "application/zip")
    /// ```
    public static func data(_ bytes: Data, contentType: String) -> RequestBody {
        RequestBody(content: .raw(bytes, contentType: contentType))
    }

    /// Text sent as UTF-8.
    ///
    /// - Parameters:
    ///   - text: the text, sent as UTF-8.
    ///   - contentType: its media type, `text/plain; charset=utf-8` by default.
    /// - Returns: a body of that text with that content type.
    ///
    /// ```swift
    /// body: .text("note", contentType: "text/plain; charset=utf-8")
    /// ```
    public static func text(_ text: String, contentType: String = "text/plain; charset=utf-8") -> RequestBody {
        RequestBody(content: .raw(Data(text.utf8), contentType: contentType))
    }

    /// A JSON object body written as a dictionary literal.
    ///
    /// - Parameter elements: the object's members, sent as JSON.
    ///
    /// ```swift
    /// body: ["name": "Jana Nováková"]
    /// ```
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object: [String: JSONValue] = [:]
        for (key, value) in elements { object[key] = value }
        content = .json(.object(object))
    }

    /// A JSON array body written as an array literal.
    ///
    /// - Parameter elements: the array's items, sent as JSON.
    ///
    /// ```swift
    /// body: [["id": "p1"], ["id": "p2"]]
    /// ```
    public init(arrayLiteral elements: JSONValue...) { content = .json(.array(elements)) }

    init(content: Content) { self.content = content }

    /// The bytes and content type, encoded once per call so every retry sends exactly the same body.
    func encoded() throws -> (data: Data, contentType: String) {
        switch content {
        case .json(let value): return (try JSONCoding.encode(value), "application/json")
        case .raw(let data, let type): return (data, type)
        }
    }
}
