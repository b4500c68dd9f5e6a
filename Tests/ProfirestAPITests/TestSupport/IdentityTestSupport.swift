import Foundation
@testable import ProfirestAPI

/// A clock the test moves by hand.
final class VirtualClock: @unchecked Sendable {
    // @unchecked: `current` is only touched while `lock` is held.
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = start }

    var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    func advance(_ seconds: TimeInterval) {
        lock.lock()
        current = current.addingTimeInterval(seconds)
        lock.unlock()
    }

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

/// An authorization server scripted by the test: each call to `token` takes the next answer from the script
/// (the last one repeats), records the form and Basic header, and can be held at a gate.
final class ScriptedEndpoint: OAuthEndpoint, @unchecked Sendable {
    enum Answer {
        case tokens(TokenResponse)
        case oauth(String)
        case failure(Error)
    }

    // @unchecked: everything mutable is only touched while `lock` is held.
    private let lock = NSLock()
    private var tokenScript: [Answer]
    private var deviceScript: [Answer] = []
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

    func token(form: [String: String], basicAuth: String?) async throws -> TokenResponse {
        let answer: Answer = locked {
            forms.append(form)
            basicAuths.append(basicAuth)
            guard !tokenScript.isEmpty else { return .oauth("server_error") }
            return tokenScript.count > 1 ? tokenScript.removeFirst() : tokenScript[0]
        }
        if let gate = locked({ self.gate }) { await gate.wait() }
        switch answer {
        case .tokens(let t): return t
        case .oauth(let code): throw ProfirestOAuthError(error: code, detail: nil)
        case .failure(let e): throw e
        }
    }

    func deviceAuthorization(form: [String: String]) async throws -> DeviceAuthorization {
        locked { forms.append(form) }
        if let answer = locked({ deviceAnswer }) { return answer }
        throw URLError(.notConnectedToInternet)
    }

    func revoke(form: [String: String], basicAuth: String?) async throws {
        let failure: Error? = locked {
            revoked.append(form)
            guard !revokeScript.isEmpty else { return nil }
            return revokeScript.count > 1 ? revokeScript.removeFirst() : revokeScript[0]
        }
        if let failure { throw failure }
    }

    func metadata() async throws -> AuthorizationServerMetadata {
        let answer = locked { () -> AuthorizationServerMetadata? in
            metadataCalls += 1
            return metadataAnswer
        }
        guard let answer else { throw URLError(.notConnectedToInternet) }
        return answer
    }
}

extension TokenResponse {
    static func sample(_ access: String, refresh: String? = nil, expiresIn: Int = 1800) -> TokenResponse {
        TokenResponse(
            accessToken: access, tokenType: "Bearer", expiresIn: expiresIn, scope: "restaurants:read attendance:punch",
            deviceId: "dev_7Q2M", refreshToken: refresh, restaurantId: "11")
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
