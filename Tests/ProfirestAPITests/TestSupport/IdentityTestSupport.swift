import Foundation
@testable import ProfirestAPI
import ProfirestTesting

extension VirtualClock {
    /// Where the identity tests' clocks start (their expected expiry dates are written from it).
    static let identityStart = Date(timeIntervalSince1970: 1_800_000_000)

    /// A kit clock at the identity tests' start.
    convenience init() { self.init(start: Self.identityStart) }

    /// The kit's clock as the `clock` function the options take.
    var function: @Sendable () -> Date { { [self] in self.now } }
}

/// A latch that async code can wait on until the test opens it.
final class Gate: @unchecked Sendable {
    // @unchecked: state is only touched while `lock` is held.
    private let lock = NSLock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            lock.lock()
            if isOpen {
                lock.unlock()
                c.resume()
            } else {
                waiters.append(c)
                lock.unlock()
            }
        }
    }

    func open() {
        lock.lock()
        isOpen = true
        let all = waiters
        waiters = []
        lock.unlock()
        all.forEach { $0.resume() }
    }
}

/// Waits (yielding, never sleeping) until `condition` holds; false after many rounds.
func eventually(_ condition: @Sendable () -> Bool) async -> Bool {
    for _ in 0..<200_000 {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}

/// An authorization server scripted by the test, as the transport of a `Core`: the test's one way to fake the token
/// endpoint. Each `POST /oauth/token` takes the next answer from the script (the last one repeats), records the form
/// and the Basic header, and can be held at a gate; `/oauth/revoke`, `/oauth/device_authorization` and the metadata
/// answer from their own scripts. Answers go over the wire format: tokens as JSON, OAuth errors as RFC 6749 bodies, a
/// `ProfirestAPIError` as its problem document (a status-0 one as the transport failure it stands for).
final class ScriptedEndpoint: HTTPTransport, @unchecked Sendable {
    enum Answer {
        case tokens(TokenResponse)
        case oauth(String)
        case failure(Error)
    }

    // @unchecked: everything mutable is only touched while `lock` is held.
    private let lock = NSLock()
    private var tokenScript: [Answer]
    private(set) var forms: [[String: String]] = []
    private(set) var basicAuths: [String?] = []
    private(set) var revoked: [[String: String]] = []
    /// The answers of `revoke`, one per call (the last repeats): nil for a 200, an error to throw.
    private var revokeScript: [Error?] = []
    var metadataAnswer: AuthorizationServerMetadata?
    var deviceAnswer: DeviceAuthorization?
    var gate: Gate?
    private(set) var metadataCalls = 0

    init(_ script: [Answer] = []) { tokenScript = script }

    var tokenCalls: Int { locked { forms.count } }
    var allForms: [[String: String]] { locked { forms } }
    var allBasicAuths: [String?] { locked { basicAuths } }

    func setScript(_ script: [Answer]) { locked { tokenScript = script } }
    func setRevokeScript(_ script: [Error?]) { locked { revokeScript = script } }
    /// The revoked tokens, one per attempt.
    var revokedTokens: [String] { locked { revoked.compactMap { $0["token"] } } }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    func send(_ request: HTTPRequest) async throws -> APIResponse {
        let form = request.form
        switch request.url.path {
        case "/oauth/token":
            let answer: Answer = locked {
                forms.append(form)
                basicAuths.append(request.header("Authorization"))
                guard !tokenScript.isEmpty else { return .oauth("server_error") }
                return tokenScript.count > 1 ? tokenScript.removeFirst() : tokenScript[0]
            }
            if let gate = locked({ self.gate }) { await gate.wait() }
            switch answer {
            case .tokens(let tokens): return try Self.json(200, tokens)
            case .oauth(let code): return try Self.json(400, ["error": code])
            case .failure(let error): return try Self.answer(for: error)
            }
        case "/oauth/device_authorization":
            locked { forms.append(form) }
            guard let answer = locked({ deviceAnswer }) else { throw URLError(.notConnectedToInternet) }
            return try Self.json(200, answer)
        case "/oauth/revoke":
            let failure: Error? = locked {
                revoked.append(form)
                guard !revokeScript.isEmpty else { return nil }
                return revokeScript.count > 1 ? revokeScript.removeFirst() : revokeScript[0]
            }
            if let failure { return try Self.answer(for: failure) }
            return APIResponse(status: 200, headers: [:], data: Data())
        case "/.well-known/oauth-authorization-server":
            let answer = locked { () -> AuthorizationServerMetadata? in
                metadataCalls += 1
                return metadataAnswer
            }
            guard let answer else { throw URLError(.notConnectedToInternet) }
            return try Self.json(200, answer)
        default:
            return try Self.json(404, ["code": "not_found", "title": "Not found"])
        }
    }

    private static func json<T: Encodable>(
        _ status: Int, _ body: T, contentType: String = "application/json", headers: [String: String] = [:]
    ) throws -> APIResponse {
        var headers = headers
        headers["Content-Type"] = contentType
        return APIResponse(status: status, headers: headers, data: try JSONEncoder().encode(body))
    }

    /// A scripted failure as the server (or the network) would give it.
    private static func answer(for error: Error) throws -> APIResponse {
        switch error {
        case let oauth as ProfirestOAuthError:
            return try json(400, ["error": oauth.error])
        case let api as ProfirestAPIError where api.status == 0:
            throw URLError(api.code == ErrorCode.timeout ? .timedOut : .notConnectedToInternet)
        case let api as ProfirestAPIError:
            let headers = api.retryAfter.map { ["Retry-After": String($0)] } ?? [:]
            return try json(
                api.status, ["code": api.code, "title": api.title], contentType: "application/problem+json", headers: headers)
        default:
            throw error
        }
    }
}

/// The identity layer of a unit test: a state store, the scripted authorization server as the core's transport, and
/// the client's `Identity` as its authorizer, with the calls the facade makes on them.
struct IdentityFixture {
    let core: Core
    let identity: Identity
    var store: StateStore { core.store }
    var context: Core { core }

    init(
        store: StateStore, endpoint: ScriptedEndpoint, clientID: String?, clientSecret: String? = nil,
        baseURL: URL = URL(string: "https://api.mujprofirest.cz")!,
        clock: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = RealTime.sleep,
        observe: (@Sendable (ProfirestEvent) -> Void)? = nil, retries: Int = 3, retry: RetrySchedule = RetrySchedule(),
        fixedAccessToken: String? = nil, refreshMargin: TimeInterval = 60, onUnpaired: (@Sendable () -> Void)? = nil,
        onStaffExpired: (@Sendable (StaffInfo) -> Void)? = nil
    ) {
        var unpaired: (@Sendable (ProfirestAPIError) -> Void)?
        if let onUnpaired { unpaired = { _ in onUnpaired() } }
        identity = Identity(
            fixedAccessToken: fixedAccessToken, refreshMargin: refreshMargin, onUnpaired: unpaired,
            onStaffExpired: onStaffExpired, observe: observe, clock: clock, sleep: sleep)
        let base: Result<APIBase, ProfirestUsageError>
        do {
            base = .success(try APIBase(baseURL: baseURL.absoluteString))
        } catch {
            base = .failure(error as! ProfirestUsageError)
        }
        core = Core(
            base: base, transport: endpoint,
            store: store, authorizer: identity, clientID: clientID, clientSecret: clientSecret, retries: retries,
            schedule: retry, clock: clock, sleep: sleep, attemptTimer: { _ in try await Task.sleep(nanoseconds: 60_000_000_000) },
            observe: observe)
    }

    var isPaired: Bool { identity.isPaired(store) }
    var restaurantID: String? { store.snapshot.restaurantID }
    var deviceID: String? { store.snapshot.deviceID }
    var scopes: [String] { store.snapshot.scopes }
    var staffSessions: StaffSessions { identity.staffSessions }
    var staff: StaffInfo? { identity.staffSessions.info(now: core.clock()) }

    func pair(scope: String, deviceName: String?, devicePlatform: String?, appVersion: String?) async throws -> Pairing {
        try await Pairing.start(scope: scope, deviceName: deviceName, devicePlatform: devicePlatform, appVersion: appVersion, core: core)
    }
    func resumePairing(_ state: PairingState) throws -> Pairing { try Pairing.resume(state, core: core) }
    func authorizationURL(redirectURI: String, scope: String, prompt: String?) throws -> URL {
        try PartnerAuthorization(core: core).authorizationURL(redirectURI: redirectURI, scope: scope, prompt: prompt)
    }
    func completeAuthorization(_ url: URL) async throws { try await PartnerAuthorization(core: core).completeAuthorization(url) }
    func completeAuthorization(parameters: [String: String]) async throws {
        try await PartnerAuthorization(core: core).completeAuthorization(parameters: parameters)
    }
    func remember(_ connection: Connection) async throws { try await identity.remember(connection, store: store) }
    func unpair(revoke: Bool = true, retrying: Bool = true) async throws {
        try await identity.unpair(core: core, revoke: revoke, retrying: retrying)
    }
    @discardableResult
    func staffSignedIn(_ session: StaffSession) -> StaffInfo { identity.staffSignedIn(session, core: core) }
    func signOutStaff(token: String?) -> String? { identity.signOutStaff(token: token, core: core) }
    /// The token as the identity hands it out, but its failures as the token layer throws them (`AuthFailure`), before
    /// `Identity.requestError` maps them (the wiring tests cover that).
    func accessToken() async throws -> String? {
        if let fixed = identity.fixedAccessToken { return fixed }
        return try await identity.refresher.accessToken(core: core)
    }
    func refresh(afterRejecting token: String) async throws -> String? {
        if identity.fixedAccessToken != nil { return nil }
        return try await identity.refresher.refresh(afterRejecting: token, core: core)
    }
    func staffToken() -> String? { identity.staffToken(now: core.clock()) }
    func staffRequestSucceeded(token: String) { identity.staffRequestSucceeded(token: token, now: core.clock()) }
    func staffRejected(token: String) { identity.staffRejected(token: token) }
}

extension TokenResponse {
    static func sample(_ access: String, refresh: String? = nil, expiresIn: Int = 1800) -> TokenResponse {
        TokenResponse(
            accessToken: access, tokenType: "Bearer", deviceId: "dev_7Q2M", expiresIn: expiresIn, refreshToken: refresh,
            restaurantId: "11", scope: "restaurants:read attendance:punch")
    }
}

extension ProfirestAPIError {
    /// A 503 as the endpoint throws it (retryable), optionally with Retry-After.
    static func unavailable(retryAfter: Int? = nil) -> ProfirestAPIError {
        ProfirestAPIError(
            code: ErrorCode.serviceUnavailable, status: 503, title: "Service unavailable", retryAfter: retryAfter,
            retryable: true)
    }
}

/// The staff sessions a callback was told of (`onStaffExpired`), in order.
final class InfoLog: @unchecked Sendable {
    // @unchecked: `values` is only touched while `lock` is held.
    private let lock = NSLock()
    private var values: [StaffInfo] = []
    func record(_ value: StaffInfo) {
        lock.lock()
        values.append(value)
        lock.unlock()
    }
    var all: [StaffInfo] {
        lock.lock()
        defer { lock.unlock() }
        return values
    }
}

/// The core of an identity flow under test (pairing, consent, revocation): the scripted authorization server as its
/// transport, the store and clock given, and the client's `Identity` as its authorizer.
func identityCore(
    store: StateStore, endpoint: ScriptedEndpoint, clientID: String?, clientSecret: String? = nil,
    baseURL: URL = URL(string: "https://api.mujprofirest.cz")!,
    clock: @escaping @Sendable () -> Date = { Date() },
    sleep: @escaping @Sendable (TimeInterval) async throws -> Void = RealTime.sleep,
    observe: (@Sendable (ProfirestEvent) -> Void)? = nil, retries: Int = 3, retry: RetrySchedule = RetrySchedule()
) -> Core {
    IdentityFixture(
        store: store, endpoint: endpoint, clientID: clientID, clientSecret: clientSecret, baseURL: baseURL, clock: clock,
        sleep: sleep, observe: observe, retries: retries, retry: retry
    ).core
}
