import Foundation

/// Everything needed to continue a device pairing after the app was terminated: save it (it is `Codable`) and
/// pass it to `resumePairing(_:)` while the code is still valid (10 minutes).
///
/// It holds the `device_code`, the device's secret for collecting its tokens: storing it on the device is fine,
/// but never log or send it anywhere. `description` and `dump` leave it out.
///
/// ```swift
/// let saved = try JSONEncoder().encode(pairing.state)
/// ```
public struct PairingState: Codable, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The secret the device polls with.
    ///
    /// ```swift
    /// state.deviceCode.isEmpty
    /// ```
    public var deviceCode: String
    /// The code to show, e.g. `KXCB-TQPW`.
    ///
    /// ```swift
    /// Text(state.userCode)
    /// ```
    public var userCode: String
    /// Where the manager enters the code.
    ///
    /// ```swift
    /// Text(state.verificationURI)
    /// ```
    public var verificationURI: String
    /// The address with the code filled in, for a QR code.
    ///
    /// ```swift
    /// qr(state.verificationURIComplete)
    /// ```
    public var verificationURIComplete: String
    /// Seconds between polls; 5 s more after each `slow_down`.
    ///
    /// ```swift
    /// state.interval
    /// ```
    public var interval: Int
    /// When the code stops working.
    ///
    /// ```swift
    /// state.expiresAt > Date()
    /// ```
    public var expiresAt: Date
    /// The scope the pairing asked for: what is granted when the token answer names no scope (RFC 6749 5.1);
    /// nil in a state saved without it.
    ///
    /// ```swift
    /// state.scope
    /// ```
    public var scope: String?

    /// A pairing to resume, rebuilt from values the app saved itself.
    ///
    /// - Parameters:
    ///   - deviceCode: the secret code the device polls with.
    ///   - userCode: the code the manager types, such as `KXCB-TQPW`.
    ///   - verificationURI: where the manager enters the code.
    ///   - verificationURIComplete: the same address with the code in it (for a QR code).
    ///   - interval: the seconds to wait between two polls.
    ///   - expiresAt: when the code stops working.
    ///   - scope: the scope the pairing asked for; nil when unknown.
    ///
    /// ```swift
    /// PairingState(
    ///     deviceCode: dc, userCode: "KXCB-TQPW", verificationURI: uri, verificationURIComplete: full, interval: 5,
    ///     expiresAt: end, scope: "restaurants:read")
    /// ```
    public init(
        deviceCode: String, userCode: String, verificationURI: String, verificationURIComplete: String, interval: Int,
        expiresAt: Date, scope: String? = nil
    ) {
        self.deviceCode = deviceCode
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.interval = interval
        self.expiresAt = expiresAt
        self.scope = scope
    }

    private enum CodingKeys: String, CodingKey {
        case deviceCode = "device_code"
        case userCode = "user_code"
        case verificationURI = "verification_uri"
        case verificationURIComplete = "verification_uri_complete"
        case interval
        case expiresAt = "expires_at"
        case scope
    }

    /// Reads the snake_case form written by `encode(to:)`; `verification_uri_complete` and `scope` may be absent.
    ///
    /// - Parameter decoder: the decoder to read from.
    /// - Throws: `DecodingError` when a member is missing or has the wrong type, or `expires_at` is not an RFC 3339
    ///   date.
    ///
    /// ```swift
    /// try JSONDecoder().decode(PairingState.self, from: data)
    /// ```
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        deviceCode = try c.decode(String.self, forKey: .deviceCode)
        userCode = try c.decode(String.self, forKey: .userCode)
        verificationURI = try c.decode(String.self, forKey: .verificationURI)
        verificationURIComplete =
            try c.decodeIfPresent(String.self, forKey: .verificationURIComplete) ?? verificationURI
        interval = max(1, try c.decode(Int.self, forKey: .interval))
        // RFC 3339 rather than Foundation's default number, so the saved state reads the same in every language.
        expiresAt = try c.decodeRFC3339Date(forKey: .expiresAt)
        scope = try c.decodeIfPresent(String.self, forKey: .scope)
    }

    /// Writes snake_case keys and an RFC 3339 `expires_at`.
    ///
    /// - Parameter encoder: the encoder to write to.
    /// - Throws: what the encoder throws (`EncodingError`).
    ///
    /// ```swift
    /// try JSONEncoder().encode(state)
    /// ```
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(deviceCode, forKey: .deviceCode)
        try c.encode(userCode, forKey: .userCode)
        try c.encode(verificationURI, forKey: .verificationURI)
        try c.encode(verificationURIComplete, forKey: .verificationURIComplete)
        try c.encode(interval, forKey: .interval)
        try c.encodeRFC3339Date(expiresAt, forKey: .expiresAt)
        try c.encodeIfPresent(scope, forKey: .scope)
    }

    /// The user code and expiry, never the device code.
    ///
    /// ```swift
    /// print(state)
    /// ```
    public var description: String {
        "PairingState(userCode: \(userCode), expiresAt: \(RFC3339.string(from: expiresAt)), interval: \(interval))"
    }

    /// The same as `description`.
    ///
    /// ```swift
    /// debugPrint(state)
    /// ```
    public var debugDescription: String { description }

    /// Keeps `dump` and debugger views from showing the device code.
    ///
    /// ```swift
    /// dump(state)
    /// ```
    public var customMirror: Mirror {
        Mirror(self, children: ["userCode": userCode, "verificationURI": verificationURI, "interval": interval,
                                "expiresAt": expiresAt])
    }
}
