import Foundation

/// The transport a client gets when its options name none: on Linux the process's shared ``CurlTransport`` (or
/// ``URLSessionTransport`` when libcurl cannot be used, said once to the observer), elsewhere a
/// ``URLSessionTransport``.
enum DefaultTransport {
    static func make(
        trusting trustedCertificates: TrustedCertificates?, observe: (@Sendable (ProfirestEvent) -> Void)?
    ) -> any HTTPTransport {
        #if os(Linux) && !PROFIREST_NO_CURL
        return make(trusting: trustedCertificates, observe: observe, curl: CurlTransport.shared(trusting:))
        #else
        return fallback(trusting: trustedCertificates)
        #endif
    }

    #if os(Linux) && !PROFIREST_NO_CURL
    /// `make` with the libcurl transport's maker given, so that a test can make it fail as a missing libcurl does.
    static func make(
        trusting trustedCertificates: TrustedCertificates?, observe: (@Sendable (ProfirestEvent) -> Void)?,
        curl: (TrustedCertificates?) throws -> CurlTransport
    ) -> any HTTPTransport {
        do {
            return try curl(trustedCertificates)
        } catch let error as ProfirestUsageError where LibCurl.isLoaded {
            // libcurl is there but the certificates are not usable: a mistake to report, not to work around.
            return UnusableTransport(error: error)
        } catch {
            observe?(.transportFallback(reason: "\(error)"))
            return fallback(trusting: trustedCertificates)
        }
    }
    #endif

    /// The transport used where libcurl is not: URLSession, with the extra certificates where it can trust them.
    static func fallback(trusting trustedCertificates: TrustedCertificates?) -> any HTTPTransport {
        guard let trustedCertificates else { return URLSessionTransport() }
        do {
            return try URLSessionTransport.trusting(trustedCertificates)
        } catch {
            return UnusableTransport(error: error)
        }
    }
}

/// Stands in for a transport the options asked for but that cannot be made (unreadable certificates): every request
/// fails with the reason, as a wrong `baseURL` does, since the client's initializer does not throw.
struct UnusableTransport: StreamingHTTPTransport {
    let error: Error

    func send(_ request: HTTPRequest) async throws -> APIResponse { throw error }
    func stream(_ request: HTTPRequest) async throws -> HTTPStreamingResponse { throw error }
}
