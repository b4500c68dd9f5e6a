#if os(Linux) && !PROFIREST_NO_CURL
import CProfirestCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The system's libcurl, loaded once at run time — the same `libcurl.so.4` FoundationNetworking links — so that the
/// library needs neither curl's development headers nor a package of its own to speak HTTP on Linux.
enum LibCurl {
    /// The names tried in order: Debian's and most distributions' soname, then the unversioned name of a -dev package.
    static let names = ["libcurl.so.4", "libcurl.so"]

    /// Loads libcurl once per process; later calls return the first outcome. Throws a sentence that says what is
    /// missing (no library, or a symbol an old libcurl lacks) for the one line the observer gets on a fallback.
    static func load() throws -> String {
        try loaded.get()
    }

    /// Whether libcurl was loaded (and so a failure to make a transport is about its options, not the library).
    static var isLoaded: Bool { (try? loaded.get()) != nil }

    private static let loaded: Result<String, LoadFailure> = {
        if let failure = lookup(names, keep: true) { return .failure(failure) }
        return .success(String(cString: pfc_version()!))
    }()

    /// Looks `names` up; keeps the functions when `keep` (the transport's library) or only checks them (tests).
    static func lookup(_ names: [String], keep: Bool) -> LoadFailure? {
        var message = [CChar](repeating: 0, count: 512)
        let status = withCStrings(names) { pointers in
            keep
                ? pfc_load(pointers, Int32(names.count), &message, message.count)
                : pfc_probe(pointers, Int32(names.count), &message, message.count)
        }
        let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return status == 0 ? nil : LoadFailure(message: text)
    }

    struct LoadFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    /// The error a failed transfer throws, in the terms the rest of the library reads: `URLError` codes, so that
    /// `.timedOut` is a `timeout`, an untrusted certificate its own final code, a reply that is not HTTP an
    /// `invalid_response` and anything else a `network_error`.
    static func error(_ code: Int32) -> URLError {
        let urlCode: URLError.Code
        switch code {
        case PFC_E_OPERATION_TIMEDOUT: urlCode = .timedOut
        case PFC_E_COULDNT_RESOLVE_HOST, PFC_E_COULDNT_RESOLVE_PROXY: urlCode = .cannotFindHost
        case PFC_E_COULDNT_CONNECT, PFC_E_PROXY: urlCode = .cannotConnectToHost
        case PFC_E_PEER_FAILED_VERIFICATION, PFC_E_SSL_ISSUER_ERROR: urlCode = .serverCertificateUntrusted
        case PFC_E_SSL_CONNECT_ERROR, PFC_E_SSL_CERTPROBLEM: urlCode = .secureConnectionFailed
        case PFC_E_UNSUPPORTED_PROTOCOL, PFC_E_WEIRD_SERVER_REPLY, PFC_E_BAD_CONTENT_ENCODING: urlCode = .cannotParseResponse
        case PFC_E_URL_MALFORMAT: urlCode = .badURL
        case PFC_E_GOT_NOTHING, PFC_E_SEND_ERROR, PFC_E_RECV_ERROR, PFC_E_PARTIAL_FILE, PFC_E_HTTP2, PFC_E_HTTP2_STREAM:
            urlCode = .networkConnectionLost
        default: urlCode = .unknown
        }
        let reason = "libcurl: \(String(cString: pfc_easy_strerror(code))) (CURLcode \(code))"
        return URLError(urlCode, userInfo: [NSLocalizedDescriptionKey: reason])
    }
}
#endif
