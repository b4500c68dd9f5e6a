// Apple-only backends, kept minimal. On Linux the test-only target PlatformShims compiles the CryptoKit part of this
// same file (PROFIREST_SHIMS) against CryptoKit and CommonCrypto shims (Sources/AppleShims).
#if canImport(CryptoKit) || PROFIREST_SHIMS
#if PROFIREST_SHIMS
import AppleShims
#else
import CryptoKit
#endif
import Foundation

extension Crypto {
    static func cryptoKitSHA256(_ data: Data) -> Data {
        Data(SHA256.hash(data: data))
    }

    static func cryptoKitHMACSHA256(key: Data, message: Data) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }
}
#endif

#if canImport(CommonCrypto) || PROFIREST_SHIMS
#if PROFIREST_SHIMS
import AppleShims
#else
import CommonCrypto
#endif
import Foundation

extension Crypto {
    /// CryptoKit has no PBKDF2; CommonCrypto's is native and fast. Nil on failure, so the caller falls back.
    static func commonCryptoPBKDF2(password: Data, salt: Data, iterations: Int, keyLength: Int) -> Data? {
        guard let rounds = UInt32(exactly: iterations) else { return nil }
        var derived = [UInt8](repeating: 0, count: keyLength)
        let status: Int32 = password.withUnsafeBytes { passwordBytes in
            salt.withUnsafeBytes { saltBytes in
                CCKeyDerivationPBKDF(
                    CCPBKDFAlgorithm(kCCPBKDF2),
                    passwordBytes.baseAddress?.assumingMemoryBound(to: CChar.self), passwordBytes.count,
                    saltBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), saltBytes.count,
                    CCPseudoRandomAlgorithm(kCCPRFHmacAlgSHA256), rounds,
                    &derived, keyLength)
            }
        }
        return status == Int32(kCCSuccess) ? Data(derived) : nil
    }
}
#endif
