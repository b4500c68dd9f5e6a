import Foundation

/// A device pairing by code in progress (RFC 8628): show `userCode` (or a QR code of `verificationURIComplete`),
/// then `try await connected()` until a manager confirms it in the administration.
///
/// Polling follows the server's interval (5 s, and 5 s when the server names none), 5 s slower for good after each
/// `slow_down`, and never faster.
/// A network outage is waited out until the code expires. A refusal throws `ProfirestOAuthError` `access_denied`,
/// an expired code `expired_token` (also locally, without another request, once `expiresAt` has passed).
/// Cancelling the waiting task — or calling `cancel()` — stops it with `CancellationError`.
///
/// ```swift
/// let pairing = try await api.pair(scope: "restaurants:read attendance:punch", deviceName: "Píchačka")
/// show(pairing.userCode); try await pairing.connected()
/// ```
public final class Pairing: Sendable {
    /// The code to show the manager, e.g. `KXCB-TQPW`.
    ///
    /// ```swift
    /// Text(pairing.userCode)
    /// ```
    public let userCode: String
    /// Where the manager enters the code.
    ///
    /// ```swift
    /// Text(pairing.verificationURI)
    /// ```
    public let verificationURI: String
    /// The address with the code filled in (for a QR code); the plain address when the server sent none.
    ///
    /// ```swift
    /// QRCode(pairing.verificationURIComplete)
    /// ```
    public let verificationURIComplete: String
    /// When the code stops working.
    ///
    /// ```swift
    /// Text(pairing.expiresAt, style: .timer)
    /// ```
    public let expiresAt: Date

    private let core: Core
    private let client: OAuthClient
    private let progress: Locked<Progress>

    private struct Progress {
        var state: PairingState
        var lastPollAt: Date?
        var isConnected = false
        var isCancelled = false
        var loop: Task<Void, Error>?
    }

    init(state: PairingState, core: Core, client: OAuthClient) {
        userCode = state.userCode
        verificationURI = state.verificationURI
        verificationURIComplete = state.verificationURIComplete.isEmpty
            ? state.verificationURI : state.verificationURIComplete
        expiresAt = state.expiresAt
        self.core = core
        self.client = client
        progress = Locked(Progress(state: state))
    }

    /// Starts a pairing: asks the server for the codes (`POST /oauth/device_authorization`).
    /// `devicePlatform` defaults to the platform this runs on.
    static func start(
        scope: String, deviceName: String?, devicePlatform: String?, appVersion: String?, core: Core
    ) async throws -> Pairing {
        let client = try OAuthClient.of(core, for: "pair(scope:deviceName:devicePlatform:appVersion:)")
        var form = ["client_id": client.clientID, "scope": scope]
        form["device_name"] = deviceName
        form["device_platform"] = devicePlatform ?? Self.currentPlatform
        form["app_version"] = appVersion
        let answer = try await OAuthEndpoint(core: core).deviceAuthorization(form: form)
        // Both optional (RFC 8628 3.2): the plain address serves the QR code too, and without an interval it is 5 s.
        let complete = answer.verificationUriComplete.flatMap { $0.isEmpty ? nil : $0 } ?? answer.verificationUri
        let state = PairingState(
            deviceCode: answer.deviceCode, userCode: answer.userCode, verificationURI: answer.verificationUri,
            verificationURIComplete: complete, interval: max(1, answer.interval ?? defaultInterval),
            expiresAt: core.clock().addingTimeInterval(TimeInterval(answer.expiresIn)), scope: scope)
        let pairing = Pairing(state: state, core: core, client: client)
        // The manager cannot have confirmed yet: the first poll waits one interval like every other.
        pairing.progress.withLock { $0.lastPollAt = core.clock() }
        return pairing
    }

    /// Seconds between polls when the device authorization answer names no interval (RFC 8628 3.2).
    static let defaultInterval = 5

    /// Continues a pairing saved from `state`, e.g. after the app was terminated.
    static func resume(_ state: PairingState, core: Core) throws -> Pairing {
        let client = try OAuthClient.of(core, for: "resumePairing(_:)")
        return Pairing(state: state, core: core, client: client)
    }

    /// What to save to continue later with `resumePairing(_:)`; `interval` grows after `slow_down`.
    ///
    /// ```swift
    /// try JSONEncoder().encode(pairing.state)
    /// ```
    public var state: PairingState { progress.withLock { $0.state } }

    /// Waits until the manager confirms the code, then stores the tokens, the restaurant and the device.
    ///
    /// ```swift
    /// try await pairing.connected()
    /// ```
    public func connected() async throws {
        let loop: Task<Void, Error> = try progress.withLock { p in
            if p.isCancelled { throw CancellationError() }
            if let running = p.loop { return running }
            let task = Task { try await self.pollUntilConnected() }
            p.loop = task
            return task
        }
        do {
            try await withTaskCancellationHandler {
                try await loop.value
            } onCancel: {
                loop.cancel()
            }
        } catch is CancellationError {
            // Only this wait was cancelled (a screen closed): a later connected() may start polling again.
            progress.withLock { if $0.loop == loop { $0.loop = nil } }
            throw CancellationError()
        } catch let error as StorageError {
            // The tokens are held in memory: a later connected() writes them again instead of polling.
            progress.withLock { if $0.loop == loop { $0.loop = nil } }
            throw error
        }
    }

    /// One step without waiting: true once connected (the tokens are then stored), false while the manager has
    /// not confirmed yet — or when called sooner than the interval after the previous request, which it then
    /// does not send. Throws `ProfirestOAuthError` for a refusal or an expired code, and network failures as they are.
    ///
    /// ```swift
    /// if try await pairing.poll() { showPaired() }
    /// ```
    public func poll() async throws -> Bool {
        try await step()
    }

    /// Stops the pairing: a waiting `connected()` throws `CancellationError`, and so does every later call.
    ///
    /// ```swift
    /// pairing.cancel()
    /// ```
    public func cancel() {
        let loop = progress.withLock { p -> Task<Void, Error>? in
            p.isCancelled = true
            return p.loop
        }
        loop?.cancel()
    }

    private func pollUntilConnected() async throws {
        while true {
            try checkCancelled()
            do {
                if try await step() { return }
            } catch let error as ProfirestOAuthError {
                throw error
            } catch let error as StorageError {
                // The code is spent: polling again would only hear invalid_grant. The caller learns the real cause.
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                // Anything without an OAuth answer (no network, a 5xx) is waited out until the code expires.
                try checkCancelled()
            }
            try await core.sleep(delayBeforeNextPoll())
        }
    }

    /// Until the next allowed poll, but no later than the expiry (so the expiry is reported on time).
    private func delayBeforeNextPoll() -> TimeInterval {
        let now = core.clock()
        let (last, interval) = progress.withLock { ($0.lastPollAt ?? now, TimeInterval($0.state.interval)) }
        let due = last.addingTimeInterval(interval)
        return max(0, min(due, expiresAt).timeIntervalSince(now))
    }

    private func checkCancelled() throws {
        if Task.isCancelled || progress.withLock({ $0.isCancelled }) { throw CancellationError() }
    }

    private func step() async throws -> Bool {
        try checkCancelled()
        let now = core.clock()
        if now >= expiresAt && !progress.withLock({ $0.isConnected }) {
            throw ProfirestOAuthError(error: "expired_token", detail: "The pairing code has expired; start again.")
        }
        // Check and claim the poll slot in one step, so two concurrent poll() calls cannot both send.
        enum Slot { case connected, tooEarly, claimed(PairingState) }
        let slot: Slot = progress.withLock { p in
            if p.isConnected { return .connected }
            if let last = p.lastPollAt, now < last.addingTimeInterval(TimeInterval(p.state.interval)) {
                return .tooEarly
            }
            p.lastPollAt = now
            return .claimed(p.state)
        }
        let state: PairingState
        switch slot {
        case .connected:
            // Connected with tokens this process holds; they reach the storage now, or the StorageError says why not.
            try await core.store.saveUnsaved()
            return true
        case .tooEarly: return false
        case .claimed(let claimed): state = claimed
        }
        let form = client.form([
            "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": state.deviceCode,
        ])
        let response: TokenResponse
        do {
            response = try await OAuthEndpoint(core: core).token(form: form, basicAuth: client.basicAuth)
        } catch let error as ProfirestOAuthError where error.error == "authorization_pending" {
            return false
        } catch let error as ProfirestOAuthError where error.error == "slow_down" {
            // RFC 8628 3.5: 5 s more, for every later request too.
            progress.withLock { $0.state.interval += 5 }
            return false
        }
        // A cancel() while the answer was on its way: the pairing was abandoned, so its tokens are not stored.
        try checkCancelled()
        let clock = core.clock
        let replaced: String?
        do {
            // A token answer without scope granted the scope asked for (RFC 6749 5.1).
            replaced = try await core.store.replaceConnection {
                $0.replaceConnection(with: response, requestedScope: state.scope, now: clock())
            }
        } catch let error as StorageError {
            // The device is paired — the server issued its tokens, which this process now uses — but they are not
            // stored yet: say so rather than pretend, and let connected() or poll() write them again.
            progress.withLock { $0.isConnected = true }
            core.observe?(.paired)
            throw error
        }
        progress.withLock { $0.isConnected = true }
        core.observe?(.paired)
        // Pairing again replaced a grant: end it on the server (and any left from before), best effort.
        _ = await GrantRevocation(core: core, client: client).revokePending(current: replaced)
        return true
    }

    private static var currentPlatform: String {
        #if os(iOS)
        return "ios"
        #elseif os(macOS)
        return "macos"
        #elseif os(tvOS)
        return "tvos"
        #elseif os(watchOS)
        return "watchos"
        #elseif os(Windows)
        return "windows"
        #elseif os(Android)
        return "android"
        #else
        return "linux"
        #endif
    }
}

// What `print`, `dump` and debugger summaries show of a pairing: the codes a person reads, never the device code.
extension Pairing: CustomStringConvertible, CustomReflectable {
    /// The user code and expiry, never the device code.
    ///
    /// ```swift
    /// print(pairing)
    /// ```
    public var description: String { "Pairing(\(state))" }
    /// Keeps `dump` and debugger views from showing the device code.
    ///
    /// ```swift
    /// dump(pairing)
    /// ```
    public var customMirror: Mirror {
        Mirror(self, children: ["userCode": userCode, "verificationURI": verificationURI, "expiresAt": expiresAt])
    }
}
