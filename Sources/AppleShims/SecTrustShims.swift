// Test-only declaration shims of the Security trust API that Sources/ProfirestAPI/Transport/ServerTrust.swift uses
// (its Apple-only branch: a private CA's certificates as extra anchors for a server-trust challenge), with each Swift
// signature copied from the Apple documentation page cited next to it (all confirmed from the docs corpus). Weaker than
// the SDK, as SecurityShims.swift says for CFString: `CFData` and `CFArray` are `Data` and `[Any]`, so a missing
// `as CFData` / `as CFArray` is not caught.
//
// Behaviour, for ServerTrust's tests: a `SecTrust` stands for a server's certificate chain, given by the DER of the
// authority it chains to and whether the system's store trusts that authority (`SecTrust(chainingTo:systemTrusted:)`,
// a shim-only initialiser: the real one comes from the TLS layer). Evaluation succeeds when that authority is one of
// the anchors set with SecTrustSetAnchorCertificates, or when it is system-trusted and the anchors are not "only".
import Foundation

/// Weaker than Apple's class `CFData`; see the file header.
public typealias CFData = Data
/// Weaker than Apple's class `CFArray`; see the file header.
public typealias CFArray = [Any]
/// https://developer.apple.com/documentation/corefoundation/cferror — a class in the SDK (bridged to `Error`); only
/// declared and passed here.
public final class CFError {}
/// https://developer.apple.com/documentation/corefoundation/cfallocator — a class; the library passes nil.
public final class CFAllocator {}

/// https://developer.apple.com/documentation/security/seccertificate — `class SecCertificate`
public final class SecCertificate {
    let der: Data
    init(der: Data) { self.der = der }
}

/// https://developer.apple.com/documentation/security/sectrust — `class SecTrust`
public final class SecTrust {
    let authority: Data
    let systemTrusted: Bool
    var anchors: [Data]? = nil
    var anchorsOnly = false

    /// Shim only: a chain that ends at the certificate authority `authority` (DER), which the system's store trusts
    /// or not. Usage: `SecTrust(chainingTo: privateCA, systemTrusted: false)`
    public init(chainingTo authority: Data, systemTrusted: Bool) {
        self.authority = authority
        self.systemTrusted = systemTrusted
    }
}

/// https://developer.apple.com/documentation/security/seccertificatecreatewithdata(_:_:) —
/// `func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate?` "Returns nil if
/// the data passed in the data parameter is not a valid DER-encoded X.509 certificate" (the shim: bytes without a
/// certificate's outer DER shape, by the library's own `CertificateShape`, linked here).
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? {
    CertificateShape.isX509(data) ? SecCertificate(der: data) : nil
}

/// https://developer.apple.com/documentation/security/sectrustsetanchorcertificates(_:_:) —
/// `func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray?) -> OSStatus`. Calling it
/// also makes the anchors the only ones, until SecTrustSetAnchorCertificatesOnly says otherwise (that page).
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray?) -> OSStatus {
    guard let certificates = anchorCertificates?.compactMap({ ($0 as? SecCertificate)?.der }),
        certificates.count == anchorCertificates?.count
    else { return errSecParam }
    trust.anchors = certificates
    trust.anchorsOnly = true
    return errSecSuccess
}

/// https://developer.apple.com/documentation/security/sectrustsetanchorcertificatesonly(_:_:) —
/// `func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus`
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus {
    trust.anchorsOnly = anchorCertificatesOnly
    return errSecSuccess
}

/// https://developer.apple.com/documentation/security/sectrustevaluatewitherror(_:_:) —
/// `func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool`
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool {
    let trusted = (trust.anchors ?? []).contains(trust.authority) || (trust.systemTrusted && !trust.anchorsOnly)
    error?.pointee = trusted ? nil : CFError()
    return trusted
}
