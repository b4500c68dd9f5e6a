// Test-only declaration shims of exactly the CryptoKit API that Sources/ProfirestAPI/Crypto/Crypto+CryptoKit.swift
// uses, backed by the library's portable SHA-256/HMAC (PortableSHA256.swift, compiled into this module by a symlink).
// Never part of the ProfirestAPI library or any product. Signatures copied from the documentation page cited next to
// each; where a page was not fetched in this session the comment says so. Simplifications: `HashFunction` and
// `Digest` carry none of Apple's other requirements (incremental hashing, byteCount), and HMAC supports SHA256 only.
import Foundation

/// https://developer.apple.com/documentation/cryptokit/hashfunction — `protocol HashFunction` (requirements reduced
/// to the one-shot hash; page not fetched in this session)
public protocol HashFunction {
    associatedtype Digest: AppleShims.Digest
    /// https://developer.apple.com/documentation/cryptokit/hashfunction/hash(data:) —
    /// `static func hash<D>(data: D) -> Self.Digest where D : DataProtocol` (page not fetched in this session)
    static func hash<D: DataProtocol>(data: D) -> Digest
}

/// https://developer.apple.com/documentation/cryptokit/digest — `protocol Digest : ContiguousBytes,
/// CustomStringConvertible, Hashable, Sequence where Self.Element == UInt8` (page not fetched in this session)
public protocol Digest: ContiguousBytes, CustomStringConvertible, Hashable, Sequence where Element == UInt8 {}

/// https://developer.apple.com/documentation/cryptokit/sha256 — `struct SHA256` (page not fetched in this session)
public struct SHA256: HashFunction {
    /// https://developer.apple.com/documentation/cryptokit/sha256/digest — `typealias Digest = SHA256Digest`
    public typealias Digest = SHA256Digest

    /// https://developer.apple.com/documentation/cryptokit/sha256/hash(data:) —
    /// `static func hash<D>(data: D) -> SHA256.Digest where D : DataProtocol` (page not fetched in this session)
    public static func hash<D: DataProtocol>(data: D) -> SHA256Digest {
        SHA256Digest(bytes: [UInt8](PortableSHA256.hash(Data(data))))
    }
}

/// https://developer.apple.com/documentation/cryptokit/sha256digest — `struct SHA256Digest` (page not fetched)
public struct SHA256Digest: Digest {
    let bytes: [UInt8]
    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
    public var description: String { "SHA256 digest: " + bytes.map { String(format: "%02x", $0) }.joined() }
}

/// https://developer.apple.com/documentation/cryptokit/symmetrickey — `struct SymmetricKey` (page not fetched)
public struct SymmetricKey {
    let bytes: Data
    /// https://developer.apple.com/documentation/cryptokit/symmetrickey/init(data:) —
    /// `init<D>(data: D) where D : ContiguousBytes` (page not fetched in this session)
    public init<D: ContiguousBytes>(data: D) {
        bytes = data.withUnsafeBytes { Data($0) }
    }
}

/// https://developer.apple.com/documentation/cryptokit/hmac — `struct HMAC<H> where H : HashFunction` (confirmed)
public struct HMAC<H: HashFunction> {
    /// https://developer.apple.com/documentation/cryptokit/hmac/mac — `typealias MAC = HashedAuthenticationCode<H>`
    /// (as in swift-crypto's HMAC page, https://apple.github.io/swift-crypto/docs/current/Crypto/Structs/HMAC.html)
    public typealias MAC = HashedAuthenticationCode<H>

    /// https://developer.apple.com/documentation/cryptokit/hmac/authenticationcode(for:using:)-737ab —
    /// `static func authenticationCode<D>(for data: D, using key: SymmetricKey) -> HMAC<H>.MAC where D : DataProtocol`
    /// (confirmed). Only SHA256 is backed here.
    public static func authenticationCode<D: DataProtocol>(for data: D, using key: SymmetricKey) -> HMAC<H>.MAC {
        precondition(H.self == SHA256.self, "the CryptoKit shim backs HMAC<SHA256> only")
        return MAC(bytes: [UInt8](PortableSHA256.hmac(key: key.bytes, message: Data(data))))
    }
}

/// https://developer.apple.com/documentation/cryptokit/hashedauthenticationcode — `struct HashedAuthenticationCode<H>
/// where H : HashFunction`, conforming to `MessageAuthenticationCode` (ContiguousBytes, Hashable, Sequence of UInt8)
/// (page not fetched in this session)
public struct HashedAuthenticationCode<H: HashFunction>: ContiguousBytes, Hashable, Sequence {
    let bytes: [UInt8]
    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}
