#if os(Linux) && !PROFIREST_NO_CURL
import CProfirestCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transport a client uses on Linux unless given another: libcurl — the one FoundationNetworking already loads —
/// driven directly by one thread, without FoundationNetworking's layer in between.
///
/// - Connections are kept as long as the server keeps them, for reads and writes alike; a write's body stays with
///   the transfer, so when libcurl re-sends a request on a new connection (a kept-alive one died under it) the
///   whole body goes again.
/// - HTTP/2 when the server offers it over TLS, with requests multiplexed on one connection.
/// - An idle connection or a quiet event stream costs no CPU; a stream whose reader is behind is paused, so its
///   buffer stays bounded.
/// - Redirects are never followed (the 3xx comes back with its Location), a 401 comes back at once with its body,
///   headers go exactly as the request has them (libcurl adds none of its own), no cookies, no cache.
/// - Each exchange ends at `HTTPRequest.timeout`, body included; a stream's timeout bounds its head only.
/// - A certificate that cannot be trusted fails at once with `URLError(.serverCertificateUntrusted)`, which the
///   library reports as `certificate_untrusted` and never retries.
///
/// ```swift
/// let transport = try CurlTransport(trustedCertificates: .pemFile("ca.pem"))
/// ```
public final class CurlTransport: StreamingHTTPTransport, BoundsEachAttempt {
    private let engine: CurlEngine
    /// The CA bundle this transport wrote for its extra certificates, removed with it.
    private let bundleFile: String?

    /// The transport shared by every client that did not choose one (one connection pool and one thread for the
    /// process), by the certificates it trusts.
    private static let shared = Locked([TrustedCertificates?: CurlTransport]())

    /// Makes a transport with a connection pool and a thread of its own; share it between clients.
    ///
    /// - Parameters:
    ///   - trustedCertificates: certificate authorities to trust besides the system's, or nil.
    ///   - proxy: a forward proxy for every request (`http://proxy.example:3128`; HTTPS goes through it with CONNECT),
    ///     or nil for libcurl's environment variables (`https_proxy`, `http_proxy`, `no_proxy`).
    /// - Throws: ``ProfirestUsageError`` when libcurl cannot be loaded (or is older than 7.66), the certificates
    ///   cannot be read, or `proxy` is not an http(s) URL.
    public convenience init(trustedCertificates: TrustedCertificates? = nil, proxy: URL? = nil) throws {
        try self.init(trustedCertificates: trustedCertificates, streamBufferLimit: 1 << 20, proxy: proxy)
    }

    init(trustedCertificates: TrustedCertificates?, streamBufferLimit: Int, proxy: URL? = nil) throws {
        if let proxy, !["http", "https"].contains(proxy.scheme?.lowercased() ?? "") || proxy.host == nil {
            throw ProfirestUsageError("proxy \(proxy.absoluteString) is not an http(s) URL such as http://proxy.example:3128")
        }
        do {
            _ = try LibCurl.load()
        } catch {
            throw ProfirestUsageError("CurlTransport is not available: \(error)")
        }
        var authorities: String?
        var ownFile: String?
        if let trustedCertificates {
            // libcurl's CA option replaces its default store, so the system's bundle goes along with the extra ones,
            // in a file of this transport's own (certificates are public; the file is removed with the transport).
            let system = Self.systemBundle().flatMap { FileManager.default.contents(atPath: $0) }.map { $0 + Data("\n".utf8) }
            let pem = (system ?? Data()) + (try trustedCertificates.load().pem)
            let path = NSTemporaryDirectory() + "profirest-ca-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString).pem"
            guard FileManager.default.createFile(atPath: path, contents: pem, attributes: [.posixPermissions: 0o600]) else {
                throw ProfirestUsageError("trustedCertificates: the bundle for libcurl could not be written to \(path)")
            }
            authorities = path
            ownFile = path
        } else {
            // The system's bundle alone, when there is one: the same certificates libcurl would find, without the
            // directory that keeps it from caching them.
            authorities = Self.systemBundle()
        }
        bundleFile = ownFile
        engine = try CurlEngine(settings: CurlSettings(
            authorities: authorities, streamBufferLimit: streamBufferLimit, proxy: proxy?.absoluteString))
    }

    deinit {
        engine.stop()
        if let bundleFile { try? FileManager.default.removeItem(atPath: bundleFile) }
    }

    /// The system's CA bundle file as libcurl would read it by default (its built-in path), or the usual Debian/Red Hat
    /// files when that path cannot be asked for; nil when none is readable.
    private static func systemBundle() -> String? {
        var paths: [String] = []
        if let easy = pfc_easy_init() {
            var path: UnsafePointer<CChar>?
            if pfc_easy_getinfo_string(easy, Int32(PFC_INFO_CAINFO), &path) == PFC_E_OK, let path { paths.append(String(cString: path)) }
            pfc_easy_cleanup(easy)
        }
        paths += ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"]
        return paths.first { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// The libcurl in use, e.g. "libcurl/7.88.1 OpenSSL/3.0.17 zlib/1.2.13 brotli/1.0.9 zstd/1.5.4 nghttp2/1.52.0".
    ///
    /// ```swift
    /// print(CurlTransport.version ?? "libcurl is not available")
    /// ```
    public static var version: String? { try? LibCurl.load() }

    /// The process-wide transport for `trustedCertificates`, made on first use.
    static func shared(trusting trustedCertificates: TrustedCertificates?) throws -> CurlTransport {
        try shared.withLock { transports in
            if let transport = transports[trustedCertificates] { return transport }
            let transport = try CurlTransport(trustedCertificates: trustedCertificates)
            transports[trustedCertificates] = transport
            return transport
        }
    }

    /// Sends the request and returns the whole answer, whatever its status; throws `URLError` when none came
    /// (`.timedOut` once `request.timeout` has passed, body included).
    ///
    /// - Parameter request: the request, complete: absolute URL, final headers, body and the attempt's `timeout`.
    /// - Returns: the answer's status, headers and whole body, whatever the status (a 3xx or 4xx too).
    /// - Throws: `URLError` when no answer came (`.timedOut`, `.cannotConnectToHost`, `.serverCertificateUntrusted`…);
    ///   `CancellationError` when the task is cancelled.
    public func send(_ request: HTTPRequest) async throws -> APIResponse {
        let engine = self.engine
        let box = TransferBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let transfer = CurlTransfer(request: request, waiter: .whole(continuation), headDeadline: nil)
                box.set(transfer)
                engine.start(transfer)
            }
        } onCancel: {
            box.cancel(on: engine)
        }
    }

    /// Sends the request and returns once the head is in, with the body arriving as the server flushes it, for the
    /// event feed's live stream. `request.timeout` bounds the wait for the head; ending the iteration or cancelling
    /// the reading task cancels the request.
    ///
    /// - Parameter request: the request, complete: absolute URL, final headers, body and the attempt's `timeout`.
    /// - Returns: the status and headers, with the body to read as it arrives.
    /// - Throws: `URLError` when no head came (`.timedOut` once `request.timeout` has passed, or the connection's
    ///   failure); `CancellationError` when the task is cancelled.
    public func stream(_ request: HTTPRequest) async throws -> HTTPStreamingResponse {
        let engine = self.engine
        let box = TransferBox()
        let body = CurlStreamBody(
            limit: engine.streamBufferLimit,
            resume: { [weak box] in box?.resume(on: engine) },
            cancel: { [weak box] in box?.cancel(on: engine) })
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0.001, min(request.timeout, 864_000)) * 1e9)
        let head = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<APIResponse, Error>) in
                let transfer = CurlTransfer(request: request, waiter: .stream(continuation, body), headDeadline: deadline)
                box.set(transfer)
                engine.start(transfer)
            }
        } onCancel: {
            box.cancel(on: engine)
        }
        // The body keeps the transport too: a stream read after the last reference to its transport is gone
        // still has its engine.
        return HTTPStreamingResponse(status: head.status, headers: head.headers, body: body.sequence(keeping: [box, self]))
    }
}

/// The transfer of one call, for the cancellation handler, which may run before the transfer exists.
final class TransferBox: @unchecked Sendable {
    // @unchecked: `transfer` and `cancelled` are guarded by `lock`.
    private let lock = NSLock()
    private var transfer: CurlTransfer?
    private var cancelled = false

    func set(_ transfer: CurlTransfer) {
        lock.lock()
        self.transfer = transfer
        let cancelled = self.cancelled
        lock.unlock()
        if cancelled { _ = transfer.markCancelled() }
    }

    func cancel(on engine: CurlEngine) {
        lock.lock()
        cancelled = true
        let transfer = self.transfer
        lock.unlock()
        if let transfer { engine.cancel(transfer) }
    }

    func resume(on engine: CurlEngine) {
        lock.lock()
        let transfer = self.transfer
        lock.unlock()
        if let transfer { engine.resume(transfer) }
    }
}
#endif
