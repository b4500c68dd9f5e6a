// Test-only declaration shims of exactly the CommonCrypto API that Sources/ProfirestAPI/Crypto/Crypto+CryptoKit.swift
// uses (PBKDF2), backed by the library's portable PBKDF2. Never part of the ProfirestAPI library or any product.
// CommonCrypto has no Swift documentation pages on developer.apple.com; the declarations follow the C header
// CommonKeyDerivation.h (https://opensource.apple.com/source/CommonCrypto/CommonCrypto-60049/include/CommonKeyDerivation.h.auto.html:
// `enum { kCCPBKDF2 = 2 }; typedef uint32_t CCPBKDFAlgorithm; enum { … kCCPRFHmacAlgSHA256 = 3 … };
// typedef uint32_t CCPseudoRandomAlgorithm;`) as Swift imports C: anonymous-enum constants become `Int` vars,
// `size_t` becomes `Int`, pointers implicitly unwrapped. The Swift spelling is therefore derived, not copied from a
// Swift interface — not confirmed against the SDK's generated interface.
import Foundation

/// `typedef uint32_t CCPBKDFAlgorithm;` (CommonKeyDerivation.h)
public typealias CCPBKDFAlgorithm = UInt32
/// `typedef uint32_t CCPseudoRandomAlgorithm;` (CommonKeyDerivation.h)
public typealias CCPseudoRandomAlgorithm = UInt32
/// `enum { kCCPBKDF2 = 2 };` (CommonKeyDerivation.h), imported as `var kCCPBKDF2: Int { get }`
public var kCCPBKDF2: Int { 2 }
/// `enum { … kCCPRFHmacAlgSHA256 = 3 … };` (CommonKeyDerivation.h), imported as `var kCCPRFHmacAlgSHA256: Int { get }`
public var kCCPRFHmacAlgSHA256: Int { 3 }
/// `enum { kCCSuccess = 0, … };` (CommonCryptor.h, not fetched in this session), imported as `var kCCSuccess: Int { get }`
public var kCCSuccess: Int { 0 }
/// `enum { … kCCParamError = -4300 … };` (CommonCryptor.h, not fetched in this session)
public var kCCParamError: Int { -4300 }

/// `int CCKeyDerivationPBKDF(CCPBKDFAlgorithm algorithm, const char *password, size_t passwordLen,
/// const uint8_t *salt, size_t saltLen, CCPseudoRandomAlgorithm prf, unsigned rounds, uint8_t *derivedKey,
/// size_t derivedKeyLen);` (CommonKeyDerivation.h), as Swift imports it.
public func CCKeyDerivationPBKDF(
    _ algorithm: CCPBKDFAlgorithm, _ password: UnsafePointer<CChar>!, _ passwordLen: Int,
    _ salt: UnsafePointer<UInt8>!, _ saltLen: Int, _ prf: CCPseudoRandomAlgorithm, _ rounds: UInt32,
    _ derivedKey: UnsafeMutablePointer<UInt8>!, _ derivedKeyLen: Int
) -> Int32 {
    guard algorithm == CCPBKDFAlgorithm(kCCPBKDF2), prf == CCPseudoRandomAlgorithm(kCCPRFHmacAlgSHA256), rounds > 0,
        let derivedKey, derivedKeyLen > 0
    else { return Int32(kCCParamError) }
    let passwordData = password.map { Data(bytes: $0, count: passwordLen) } ?? Data()
    let saltData = salt.map { Data(bytes: $0, count: saltLen) } ?? Data()
    let key = PortableSHA256.pbkdf2(
        password: passwordData, salt: saltData, iterations: Int(rounds), keyLength: derivedKeyLen)
    key.copyBytes(to: derivedKey, count: derivedKeyLen)
    return Int32(kCCSuccess)
}
