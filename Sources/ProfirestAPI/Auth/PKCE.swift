import Foundation

/// Proof Key for Code Exchange with S256 (RFC 7636), and the `state` of an authorization request.
///
/// The verifier is 32 random bytes in base64url: 43 characters from the unreserved set, the shortest RFC 7636
/// allows with the full 256 bits of entropy it recommends.
struct PKCE: Sendable, Hashable {
    let verifier: String

    /// A fresh verifier from the system's secure random source.
    static func make() -> PKCE { PKCE(verifier: Base64URL.encode(Crypto.randomBytes(32))) }

    /// `BASE64URL(SHA256(ASCII(verifier)))`, as sent in `code_challenge`.
    var challenge: String { Self.challenge(for: verifier) }

    static let method = "S256"

    static func challenge(for verifier: String) -> String {
        Base64URL.encode(Crypto.sha256(Data(verifier.utf8)))
    }

    /// An unguessable `state` (256 bits; the contract asks for at least 16 characters, RFC 6749 for enough
    /// entropy that an attacker cannot forge a callback).
    static func makeState() -> String { Base64URL.encode(Crypto.randomBytes(32)) }
}
