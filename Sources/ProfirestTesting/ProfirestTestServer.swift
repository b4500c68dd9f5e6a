import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ProfirestAPI

/// An in-memory Profirest server for testing an app's own code without a socket: pass it as the client's `transport`
/// (or take ``pairedClient(clientID:restaurantID:configure:)``, which does) and every request is answered here, by
/// route, on a ``VirtualClock``.
///
/// - **By route, from the contract.** A request is matched by method and path against the contract's path templates
///   (`/v2/restaurants/{restaurant_id}/staff`) and answered with the contract's example (``Fixtures``); a list's
///   example is its first page, and the page after it is empty, so reading the whole list ends. A route the contract
///   has no JSON example for answers `204 No Content`. Punches
///   (single and batch) are answered from what was sent — the punch's own id, type and time — so an outbox
///   delivering them sees each one recorded.
/// - **Scripted.** ``answer(_:_:with:)`` queues answers for the next requests of a route, ``answerAlways(_:_:with:)``
///   replaces a route's answer: a body, a catalog problem, or a fault (``TestAnswer``: drop, delay on the virtual
///   clock, 503 with Retry-After, 401, `staff_ambiguous`). ``isOffline`` fails every request as a phone without
///   network does.
/// - **Tokens.** It keeps one access and one refresh token. A request with any other access token gets
///   `401 invalid_token`; ``expireAccessToken()`` makes the client's token such a one, and the token endpoint
///   (`POST /oauth/token`, a refresh grant) rotates both, as the real server does.
/// - **Events.** ``pushEvent(type:data:)`` appends to the feed: an open stream (`GET /v2/events/stream`, read through
///   `StreamingHTTPTransport`) gets it at once, polling (`GET /v2/events`) on its next page. ``dropStreams()`` cuts
///   the open streams.
/// - **Recorded.** ``requests`` lists every request in order; ``requests(_:_:)`` those of one route.
///
/// ```swift
/// let server = ProfirestTestServer()
/// let api = try server.pairedClient()
/// server.answer("GET", "/v2/restaurants/{restaurant_id}/staff", with: .unavailable(retryAfter: 5))
/// ```
public final class ProfirestTestServer: StreamingHTTPTransport, Sendable {
    private struct Route {
        let method: String
        let path: String
        var queue: [TestAnswer]
        var always: TestAnswer?
    }

    private struct Feed {
        var events: [JSONValue] = []
        var streams: [Int: AsyncThrowingStream<Data, Error>.Continuation] = [:]
        var nextStream = 0
    }

    private struct State {
        var requests: [HTTPRequest] = []
        var routes: [Route] = []
        var offline = false
        var accessToken: String
        var refreshToken: String
        var generation = 1
        var refreshes = 0
        var punches: [String: JSONValue] = [:]
        var feed = Feed()
        var requestCount = 0
    }

    /// The clock this server delays answers on, and the clients it builds wait on.
    public let clock: VirtualClock
    /// The restaurant of ``pairedClient(clientID:restaurantID:configure:)``'s pairing, and of the events pushed.
    public let restaurantID: String
    /// The address the clients it builds are given; no request leaves the process.
    public static let baseURL = "https://api.mujprofirest.cz"

    private let state: Locked<State>

    /// A server with the contract's answers, valid tokens for one paired device, and an empty event feed.
    ///
    /// - Parameters:
    ///   - clock: the virtual clock for delays and for the clients it builds; a new one when nil.
    ///   - restaurantID: the paired device's restaurant.
    public init(clock: VirtualClock? = nil, restaurantID: String = "11") {
        self.clock = clock ?? VirtualClock()
        self.restaurantID = restaurantID
        state = Locked(State(accessToken: "at_test_1", refreshToken: "rt_test_1"))
    }

    // MARK: - A paired client

    /// A client that is paired with this server already: its tokens in a `MemoryTokenStorage`, this server as its
    /// transport, and the server's ``clock`` as its `clock` and `sleep`.
    ///
    /// - Parameters:
    ///   - clientID: the client's id (the storage key is made from it).
    ///   - restaurantID: the restaurant the pairing names; the server's ``restaurantID`` when nil.
    ///   - configure: changes the options before the client is made (retries, observer, language …).
    /// - Returns: the client, ready to send.
    /// - Throws: what the storage throws when the tokens are written (a memory storage does not).
    ///
    /// ```swift
    /// let api = try server.pairedClient { $0.retries = 0 }
    /// ```
    public func pairedClient(
        clientID: String = "profirest-dochazka", restaurantID: String? = nil,
        configure: (inout ProfirestApi.Options) -> Void = { _ in }
    ) throws -> ProfirestApi {
        let storage = MemoryTokenStorage()
        let (access, refresh) = state.withLock { ($0.accessToken, $0.refreshToken) }
        // The state document every Profirest library shares (StoredState's documented keys).
        let document: JSONValue = .object([
            "version": 1, "access_token": .string(access), "refresh_token": .string(refresh),
            "expires_at": .string(Self.rfc3339(clock.now.addingTimeInterval(1800))), "token_type": "Bearer",
            "scopes": .array(Self.scopes.split(separator: " ").map { .string(String($0)) }),
            "restaurant_id": .string(restaurantID ?? self.restaurantID), "device_id": "dev_test",
        ])
        try storage.set("profirest-api:" + clientID, String(decoding: try Self.encode(document), as: UTF8.self))
        let clock = self.clock
        var options = ProfirestApi.Options(
            baseURL: Self.baseURL, clientID: clientID, storage: storage, transport: self, clock: { clock.now },
            sleep: { try await clock.sleep($0) })
        configure(&options)
        return ProfirestApi(options: options)
    }

    // MARK: - Scripting

    /// Answers the next requests of a route with `answers`, one each, in order; then the route answers as before.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, such as `POST`.
    ///   - path: a contract path template (`/v2/restaurants/{restaurant_id}/attendance/punches`) or a literal path.
    ///   - answers: the answers, one per request.
    public func answer(_ method: String, _ path: String, with answers: TestAnswer...) {
        update(method, path) { $0.queue += answers }
    }

    /// Answers every request of a route with `answer` (after any queued by ``answer(_:_:with:)``); `.fixture` gives
    /// the route its own answer back.
    ///
    /// - Parameters:
    ///   - method: the HTTP method.
    ///   - path: a contract path template or a literal path.
    ///   - answer: the answer for each request.
    public func answerAlways(_ method: String, _ path: String, with answer: TestAnswer) {
        update(method, path) { $0.always = answer }
    }

    /// While true, every request fails at once with `URLError(.notConnectedToInternet)`, as on a phone without
    /// network (and is still recorded).
    public var isOffline: Bool {
        get { state.withLock { $0.offline } }
        set { state.withLock { $0.offline = newValue } }
    }

    /// Makes the client's access token one the server no longer takes: its next request gets `401 invalid_token`,
    /// it refreshes at the token endpoint and sends again.
    public func expireAccessToken() {
        state.withLock { state in
            state.generation += 1
            state.accessToken = "at_test_\(state.generation)"
        }
    }

    /// How many refresh grants the token endpoint has answered.
    public var refreshCount: Int { state.withLock { $0.refreshes } }

    // MARK: - Events

    /// Appends an event of this server's restaurant to the feed: open streams get it at once, polling readers on
    /// their next page.
    ///
    /// - Parameters:
    ///   - type: the event type, such as `order.created`.
    ///   - data: the event's `data` object.
    /// - Returns: the event's id (`evt_test_<n>`).
    @discardableResult
    public func pushEvent(type: String, data: [String: JSONValue] = [:]) -> String {
        let occurred = Self.rfc3339(clock.now)
        let (id, chunk, streams) = state.withLock { state -> (String, Data, [AsyncThrowingStream<Data, Error>.Continuation]) in
            let id = "evt_test_\(state.feed.events.count + 1)"
            let event: JSONValue = .object([
                "id": .string(id), "type": .string(type), "restaurant_id": .string(restaurantID),
                "occurred_at": .string(occurred), "data": .object(data),
            ])
            state.feed.events.append(event)
            return (id, Self.sse(event, cursor: Self.cursor(state.feed.events.count)), Array(state.feed.streams.values))
        }
        for stream in streams { stream.yield(chunk) }
        return id
    }

    /// Cuts every open event stream, as a lost connection does: the readers reconnect from their last event.
    public func dropStreams() {
        let streams = state.withLock { state -> [AsyncThrowingStream<Data, Error>.Continuation] in
            defer { state.feed.streams = [:] }
            return Array(state.feed.streams.values)
        }
        for stream in streams { stream.finish(throwing: URLError(.networkConnectionLost)) }
    }

    /// How many event streams are open now.
    public var openStreams: Int { state.withLock { $0.feed.streams.count } }

    // MARK: - What was sent

    /// Every request sent so far, in the order they arrived.
    public var requests: [HTTPRequest] { state.withLock { $0.requests } }

    /// The requests of one route, in order.
    ///
    /// - Parameters:
    ///   - method: the HTTP method.
    ///   - path: a contract path template or a literal path.
    /// - Returns: the requests whose method and path fit.
    public func requests(_ method: String, _ path: String) -> [HTTPRequest] {
        requests.filter { $0.method == method && RouteTemplate.matches(path, $0.url.path) }
    }

    /// The punches the server has recorded, by punch id (the JSON of each `AttendancePunch`).
    public var recordedPunches: [String: JSONValue] { state.withLock { $0.punches } }

    // MARK: - HTTPTransport

    /// Answers `request` as the route says (see the type's description).
    ///
    /// - Parameter request: the request the client sends.
    /// - Returns: the answer.
    /// - Throws: `URLError` for a dropped connection or while ``isOffline``; `CancellationError` when the request's task
    ///   is cancelled during a delay.
    public func send(_ request: HTTPRequest) async throws -> APIResponse {
        let scripted = try take(request)
        if let scripted, case .fixture = scripted {} else if let scripted {
            return try await carry(scripted, request)
        }
        if request.method == "GET" && request.url.path == "/v2/events/stream" {
            return APIResponse(status: 200, headers: ["Content-Type": "text/event-stream"])
        }
        return own(request)
    }

    /// Answers `request` as ``send(_:)`` does, and the event stream (`GET /v2/events/stream`) live: what was pushed
    /// after the reader's `Last-Event-ID` (or `cursor`) at once, then each event as it is pushed.
    ///
    /// - Parameter request: the request the client sends.
    /// - Returns: the answer, streamed.
    /// - Throws: as ``send(_:)`` does.
    public func stream(_ request: HTTPRequest) async throws -> HTTPStreamingResponse {
        let isStream = request.method == "GET" && request.url.path == "/v2/events/stream"
        let scripted = try take(request)
        if let scripted, case .fixture = scripted {} else if let scripted {
            let answer = try await carry(scripted, request)
            return HTTPStreamingResponse(status: answer.status, headers: answer.headers, body: Self.body(answer.data))
        }
        guard isStream else {
            let answer = own(request)
            return HTTPStreamingResponse(status: answer.status, headers: answer.headers, body: Self.body(answer.data))
        }
        if let refusal = unauthorized(request) {
            return HTTPStreamingResponse(status: refusal.status, headers: refusal.headers, body: Self.body(refusal.data))
        }
        let (body, continuation) = AsyncThrowingStream<Data, Error>.makeStream()
        let start = request.header("Last-Event-ID") ?? Self.query(request, "cursor")
        let id: Int = state.withLock { state in
            let from = start.flatMap(Self.position) ?? state.feed.events.count
            var opening = Data("retry: 2000\n: open\n\n".utf8)
            for (index, event) in state.feed.events.enumerated() where index >= from {
                opening += Self.sse(event, cursor: Self.cursor(index + 1))
            }
            continuation.yield(opening)
            state.feed.nextStream += 1
            state.feed.streams[state.feed.nextStream] = continuation
            return state.feed.nextStream
        }
        continuation.onTermination = { [state] _ in
            state.withLock { _ = $0.feed.streams.removeValue(forKey: id) }
        }
        return HTTPStreamingResponse(
            status: 200, headers: ["Content-Type": "text/event-stream", "Profirest-Heartbeat": "15"], body: body)
    }

    // MARK: - Inside

    private func update(_ method: String, _ path: String, _ change: (inout Route) -> Void) {
        state.withLock { state in
            let method = method.uppercased()
            if let index = state.routes.firstIndex(where: { $0.method == method && $0.path == path }) {
                change(&state.routes[index])
            } else {
                var route = Route(method: method, path: path, queue: [], always: nil)
                change(&route)
                state.routes.append(route)
            }
        }
    }

    /// Records the request and takes its scripted answer, if any; throws at once while offline.
    private func take(_ request: HTTPRequest) throws -> TestAnswer? {
        let (offline, answer): (Bool, TestAnswer?) = state.withLock { state in
            state.requests.append(request)
            if state.offline { return (true, nil) }
            let path = request.url.path
            for index in state.routes.indices
            where state.routes[index].method == request.method && RouteTemplate.matches(state.routes[index].path, path) {
                if !state.routes[index].queue.isEmpty { return (false, state.routes[index].queue.removeFirst()) }
                if let always = state.routes[index].always { return (false, always) }
            }
            return (false, nil)
        }
        if offline { throw URLError(.notConnectedToInternet) }
        return answer
    }

    private func carry(_ answer: TestAnswer, _ request: HTTPRequest) async throws -> APIResponse {
        switch answer {
        case .fixture:
            return own(request)
        case .json(let status, let body):
            return Self.json(status, body)
        case .response(let response):
            return response
        case .problem(let status, let code, let extra, let retryAfter):
            return problem(status, code, request, extra: extra, retryAfter: retryAfter)
        case .drop:
            throw URLError(.networkConnectionLost)
        case .delay(let seconds, let then):
            try await clock.sleep(seconds)
            return try await carry(then, request)
        }
    }

    /// The server's own answer: the token endpoint, the access check, punches, the event feed, else the fixture.
    private func own(_ request: HTTPRequest) -> APIResponse {
        let path = request.url.path
        if request.method == "POST" && path == "/oauth/token" { return token(request) }
        if request.method == "POST" && path == "/oauth/revoke" { return APIResponse(status: 200) }
        if let refusal = unauthorized(request) { return refusal }
        let body = request.body.flatMap { try? JSONDecoder().decode(JSONValue.self, from: $0) }
        if request.method == "POST" && RouteTemplate.matches("/v2/restaurants/{restaurant_id}/attendance/punches", path) {
            return record(body ?? .null, restaurant: Self.segment(path, 3)).answer
        }
        if request.method == "POST"
            && RouteTemplate.matches("/v2/restaurants/{restaurant_id}/attendance/punches/batch", path)
        {
            let results: [JSONValue] = (body?["punches"]?.arrayValue ?? []).map { punch in
                let recorded = record(punch, restaurant: Self.segment(path, 3))
                return .object(["id": punch["id"] ?? .null, "status": .integer(recorded.answer.status), "punch": recorded.punch])
            }
            return Self.json(200, .object(["results": .array(results)]))
        }
        if request.method == "GET" && path == "/v2/events" { return page(request) }
        if let fixture = Fixtures.fixture(request.method, path) {
            return Self.query(request, "cursor") == nil ? fixture.response : Self.lastPage(after: fixture)
        }
        return APIResponse(status: 204)
    }

    /// A list's example is its first page; the page after it (the example's `next_cursor` followed) is empty and
    /// the last, so that reading the whole list ends.
    private static func lastPage(after fixture: ContractFixture) -> APIResponse {
        guard var members = (try? fixture.decode(as: JSONValue.self))?.objectValue, members["data"] != nil else {
            return fixture.response
        }
        members["data"] = .array([])
        members["next_cursor"] = nil
        if members["has_more"] != nil { members["has_more"] = false }
        return json(fixture.status, .object(members))
    }

    private func unauthorized(_ request: HTTPRequest) -> APIResponse? {
        guard request.url.path.hasPrefix("/v2/") else { return nil }
        let valid = state.withLock { $0.accessToken }
        if request.header("Authorization") == "Bearer \(valid)" { return nil }
        return problem(401, "invalid_token", request)
    }

    private func token(_ request: HTTPRequest) -> APIResponse {
        let form = Self.form(request.body)
        let tokens: (String, String)? = state.withLock { state in
            guard form["grant_type"] == "refresh_token", form["refresh_token"] == state.refreshToken else { return nil }
            state.generation += 1
            state.refreshes += 1
            state.accessToken = "at_test_\(state.generation)"
            state.refreshToken = "rt_test_\(state.generation)"
            return (state.accessToken, state.refreshToken)
        }
        guard let (access, refresh) = tokens else {
            return Self.json(400, .object(["error": "invalid_grant", "error_description": "unknown refresh token"]))
        }
        return Self.json(200, .object([
            "access_token": .string(access), "token_type": "Bearer", "expires_in": 1800,
            "refresh_token": .string(refresh), "scope": .string(Self.scopes), "restaurant_id": .string(restaurantID),
            "device_id": "dev_test",
        ]))
    }

    /// Records a punch once by its id, as the server does: 201 the first time, 200 with the same body after.
    private func record(_ punch: JSONValue, restaurant: String) -> (answer: APIResponse, punch: JSONValue) {
        guard let id = punch["id"]?.stringValue, let type = punch["type"]?.stringValue else {
            let answer = Self.json(422, .object([
                "type": "https://api.mujprofirest.cz/problems/validation_failed", "title": "validation_failed",
                "status": 422, "code": "validation_failed",
            ]))
            return (answer, .null)
        }
        let now = Self.rfc3339(clock.now)
        let (recorded, first): (JSONValue, Bool) = state.withLock { state in
            if let known = state.punches[id] { return (known, false) }
            let example: JSONValue = Fixtures.fixture("POST", "/v2/restaurants/{restaurant_id}/attendance/punches")
                .flatMap { try? $0.decode(as: JSONValue.self) } ?? .object([:])
            var members = example.objectValue ?? [:]
            members["id"] = .string(id)
            members["type"] = .string(type)
            members["occurred_at"] = punch["occurred_at"] ?? .string(now)
            members["recorded_at"] = .string(now)
            members["restaurant_id"] = .string(restaurant)
            members["state"] = .string(Self.state(after: type))
            state.punches[id] = .object(members)
            return (.object(members), true)
        }
        return (Self.json(first ? 201 : 200, recorded), recorded)
    }

    private func page(_ request: HTTPRequest) -> APIResponse {
        let cursor = Self.query(request, "cursor")
        let limit = Self.query(request, "limit").flatMap(Int.init) ?? 100
        return state.withLock { state in
            let end = state.feed.events.count
            guard let cursor else {
                return Self.json(200, .object(["data": .array([]), "next_cursor": .string(Self.cursor(end)), "has_more": false]))
            }
            let from = min(Self.position(cursor) ?? end, end)
            let to = min(end, from + max(1, limit))
            return Self.json(200, .object([
                "data": .array(Array(state.feed.events[from..<to])), "next_cursor": .string(Self.cursor(to)),
                "has_more": .bool(to < end),
            ]))
        }
    }

    private func problem(
        _ status: Int, _ code: String, _ request: HTTPRequest, extra: [String: JSONValue] = [:], retryAfter: Int? = nil
    ) -> APIResponse {
        let number = state.withLock { state -> Int in
            state.requestCount += 1
            return state.requestCount
        }
        var members: [String: JSONValue] = [
            "type": .string("https://api.mujprofirest.cz/problems/\(code)"), "title": .string(code),
            "status": .integer(status), "code": .string(code), "instance": .string(request.url.path),
            "request_id": .string("req_test_\(number)"),
        ]
        var headers = ["Content-Type": "application/problem+json", "Profirest-Request-Id": "req_test_\(number)"]
        if let retryAfter {
            members["retry_after"] = .integer(retryAfter)
            headers["Retry-After"] = String(retryAfter)
        }
        if status == 401 { headers["WWW-Authenticate"] = #"Bearer error="invalid_token""# }
        for (key, value) in extra { members[key] = value }
        return APIResponse(status: status, headers: headers, data: (try? Self.encode(.object(members))) ?? Data())
    }

    private static let scopes = "restaurants:read staff:read staff:authenticate attendance:read attendance:punch"

    private static func state(after type: String) -> String {
        switch type {
        case "clock_out": return "off"
        case "break_start": return "on_break"
        default: return "working"
        }
    }

    private static func json(_ status: Int, _ body: JSONValue) -> APIResponse {
        APIResponse(status: status, headers: ["Content-Type": "application/json"], data: (try? encode(body)) ?? Data())
    }

    private static func encode(_ value: JSONValue) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(value)
    }

    private static func body(_ data: Data) -> AsyncThrowingStream<Data, Error> {
        AsyncThrowingStream { continuation in
            if !data.isEmpty { continuation.yield(data) }
            continuation.finish()
        }
    }

    private static func sse(_ event: JSONValue, cursor: String) -> Data {
        let json = (try? encode(event)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return Data("id: \(cursor)\nevent: \(event["type"]?.stringValue ?? "")\ndata: \(json)\n\n".utf8)
    }

    private static func cursor(_ position: Int) -> String { "ev_test_\(position)" }

    private static func position(_ cursor: String) -> Int? {
        cursor.hasPrefix("ev_test_") ? Int(cursor.dropFirst("ev_test_".count)) : nil
    }

    private static func query(_ request: HTTPRequest, _ name: String) -> String? {
        URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }

    private static func segment(_ path: String, _ index: Int) -> String {
        let parts = path.split(separator: "/").map(String.init)
        return index - 1 < parts.count ? parts[index - 1] : ""
    }

    private static func form(_ body: Data?) -> [String: String] {
        var components = URLComponents()
        components.percentEncodedQuery = body.map { String(decoding: $0, as: UTF8.self).replacingOccurrences(of: "+", with: "%20") }
        var result: [String: String] = [:]
        for item in components.queryItems ?? [] { result[item.name] = item.value ?? "" }
        return result
    }

    private static func rfc3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
