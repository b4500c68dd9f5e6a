import Foundation

/// Certificate authorities to trust besides the system's, for an API behind a proxy or a test server whose
/// certificate a private CA issued.
///
/// The system's trust store still applies; these are added to it. A file or bytes without a single readable PEM
/// certificate are refused when the transport is made, with a ``ProfirestUsageError`` that says what is wrong.
///
/// ```swift
/// let api = ProfirestApi(options: .init(trustedCertificates: .pemFile("/etc/profirest/ca.pem")))
/// ```
public struct TrustedCertificates: Sendable, Hashable {
    enum Source: Sendable, Hashable {
        case file(String)
        case bytes(Data)
    }

    let source: Source

    /// The certificates in a PEM file (one or more `-----BEGIN CERTIFICATE-----` blocks), read when the transport is
    /// made.
    ///
    /// - Parameter path: the PEM file's path.
    /// - Returns: the certificates to trust; the file is read, and refused when unreadable, when the transport is made.
    ///
    /// ```swift
    /// .pemFile("ca.pem")
    /// ```
    public static func pemFile(_ path: String) -> TrustedCertificates { .init(source: .file(path)) }

    /// The certificates in PEM bytes (one or more `-----BEGIN CERTIFICATE-----` blocks).
    ///
    /// - Parameter bytes: the PEM text's bytes.
    /// - Returns: the certificates to trust; the bytes are checked when the transport is made.
    ///
    /// ```swift
    /// .pem(Data(pemText.utf8))
    /// ```
    public static func pem(_ bytes: Data) -> TrustedCertificates { .init(source: .bytes(bytes)) }

    /// The PEM text and each certificate's DER bytes; throws a usage error for an unreadable file or for bytes that
    /// hold no certificate or a broken one.
    func load() throws -> (pem: Data, certificates: [Data]) {
        let bytes: Data
        let origin: String
        switch source {
        case .file(let path):
            origin = "trustedCertificates file \(path)"
            do {
                bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw ProfirestUsageError("\(origin) cannot be read: \(error.localizedDescription)")
            }
        case .bytes(let data):
            origin = "trustedCertificates"
            bytes = data
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let begin = "-----BEGIN CERTIFICATE-----"
        let end = "-----END CERTIFICATE-----"
        var certificates: [Data] = []
        var rest = text[...]
        while let start = rest.range(of: begin) {
            guard let stop = rest[start.upperBound...].range(of: end) else {
                throw ProfirestUsageError("\(origin): a certificate has no \(end) line")
            }
            let base64 = rest[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
            // Only an X.509 certificate's shape counts, whatever its armour says: Apple's platforms would drop any
            // other block without a word (`CertificateShape`).
            guard let der = Data(base64Encoded: String(base64)), CertificateShape.isX509(der) else {
                throw ProfirestUsageError(
                    "\(origin): certificate \(certificates.count + 1) is not valid base64 DER of an X.509 certificate")
            }
            certificates.append(der)
            rest = rest[stop.upperBound...]
        }
        guard !certificates.isEmpty else {
            throw ProfirestUsageError("\(origin) holds no PEM certificate (\(begin) … \(end))")
        }
        return (Data(text.utf8), certificates)
    }
}
