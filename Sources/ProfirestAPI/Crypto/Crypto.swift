import Foundation

/// The few primitives the library needs (PKCE, request signing, key derivation), without dependencies.
/// Apple platforms use CryptoKit / CommonCrypto; elsewhere the pure-Swift `PortableSHA256` runs.
enum Crypto {
    static func sha256(_ data: Data) -> Data {
        #if canImport(CryptoKit) || PROFIREST_SHIMS
        return cryptoKitSHA256(data)
        #else
        return PortableSHA256.hash(data)
        #endif
    }

    static func hmacSHA256(key: Data, message: Data) -> Data {
        #if canImport(CryptoKit) || PROFIREST_SHIMS
        return cryptoKitHMACSHA256(key: key, message: message)
        #else
        return PortableSHA256.hmac(key: key, message: message)
        #endif
    }

    /// PBKDF2 (RFC 8018) with HMAC-SHA256; `iterations` and `keyLength` below 1 are treated as 1.
    static func pbkdf2SHA256(password: Data, salt: Data, iterations: Int, keyLength: Int) -> Data {
        #if canImport(CommonCrypto) || PROFIREST_SHIMS
        if let key = commonCryptoPBKDF2(
            password: password, salt: salt, iterations: max(1, iterations), keyLength: max(1, keyLength))
        {
            return key
        }
        #endif
        return PortableSHA256.pbkdf2(
            password: password, salt: salt, iterations: max(1, iterations), keyLength: max(1, keyLength))
    }

    /// Cryptographically secure: `SystemRandomNumberGenerator` reads the OS CSPRNG on every platform.
    static func randomBytes(_ count: Int) -> Data {
        var rng = SystemRandomNumberGenerator()
        var data = Data(count: max(0, count))
        data.withUnsafeMutableBytes { raw in
            var i = 0
            while i < raw.count {
                var word = rng.next() as UInt64
                let n = min(8, raw.count - i)
                withUnsafeBytes(of: &word) { raw.baseAddress!.advanced(by: i).copyMemory(from: $0.baseAddress!, byteCount: n) }
                i += n
            }
        }
        return data
    }
}
