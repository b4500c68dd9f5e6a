#if os(Linux) && !PROFIREST_NO_CURL
import CProfirestCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request on its way through libcurl: its easy handle and options, the head and body as they arrive, and the
/// one place its caller is answered.
///
/// Apart from `cancelled`, everything here is touched on the engine's thread only: libcurl calls the header and
/// write callbacks from `curl_multi_perform`, which only that thread runs.
final class CurlTransfer: @unchecked Sendable {
    /// Who is waiting, and for what.
    enum Waiter {
        /// `send`: the whole response.
        case whole(CheckedContinuation<APIResponse, Error>)
        /// `stream`: the head, then the body through `CurlStreamBody`.
        case stream(CheckedContinuation<APIResponse, Error>, CurlStreamBody)
    }

    let request: HTTPRequest
    private(set) var easy: UnsafeMutableRawPointer?
    private var waiter: Waiter?
    /// For a stream, when its head must be in (libcurl's own timeout would end the whole stream).
    let headDeadline: UInt64?
    private let cancelled = Locked(false)

    private var headerList: UnsafeMutableRawPointer?
    /// The request body, kept where libcurl can read it again for as long as the transfer lives: libcurl re-sends it
    /// whole when a reused connection turns out to be dead.
    private var bodyBytes: UnsafeMutableRawBufferPointer?

    private var status = 0
    private var headers: [String: String] = [:]
    private var lastHeader: String?
    /// The name, as the server spelled it, of the head's Content-Length, for `maxResponseBytes`.
    private var contentLengthName: String?
    private var headBytes = 0
    private var headDone = false
    private var malformedHead: String?
    /// The answer went past `request.maxResponseBytes`: the transfer was aborted, nothing more is read.
    private var tooLarge = false
    private var body = Data()

    /// The most a response's head (status line and headers) may take; past that the reply is not what the API sends.
    static let headLimit = 64 * 1024

    #if DEBUG
    /// Transfers alive in the process, for the tests' leak checks (debug builds only).
    static let alive = Locked(0)
    #endif

    init(request: HTTPRequest, waiter: Waiter, headDeadline: UInt64?) {
        self.request = request
        self.waiter = waiter
        self.headDeadline = headDeadline
        #if DEBUG
        Self.alive.withLock { $0 += 1 }
        #endif
    }

    deinit {
        #if DEBUG
        Self.alive.withLock { $0 -= 1 }
        #endif
        if let easy { pfc_easy_cleanup(easy) }
        if let headerList { pfc_slist_free_all(headerList) }
        bodyBytes?.deallocate()
    }

    var isCancelled: Bool { cancelled.withLock { $0 } }

    /// Marks the transfer cancelled; true the first time. The engine then ends it on its thread.
    func markCancelled() -> Bool {
        cancelled.withLock { flag in
            defer { flag = true }
            return !flag
        }
    }

    var awaitsHead: Bool { !headDone && waiter != nil }

    var isStream: Bool {
        if case .stream = waiter { return true }
        return false
    }

    // MARK: Setting up

    /// Sets every option this request needs on `easy` — a new handle or one reset by the engine — which the transfer
    /// holds until the engine takes it back (`releaseHandle`). Throws for a request libcurl cannot send as it is (a
    /// header with a line break).
    func configure(_ easy: UnsafeMutableRawPointer, _ settings: CurlSettings) throws {
        self.easy = easy
        let context = Unmanaged.passUnretained(self).toOpaque()
        pfc_easy_setopt_long(easy, Int32(PFC_OPT_NOSIGNAL), 1)
        pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_URL), request.url.absoluteString)
        pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_PROTOCOLS_STR), "http,https")
        pfc_easy_setopt_long(easy, Int32(PFC_OPT_FOLLOWLOCATION), 0)
        pfc_easy_setopt_long(easy, Int32(PFC_OPT_SUPPRESS_CONNECT_HEADERS), 1)
        pfc_easy_setopt_long(easy, Int32(PFC_OPT_TCP_NODELAY), 1)
        // Keep-alive probes find a connection whose peer vanished without a FIN (Wi-Fi gone, a NAT that forgot it).
        pfc_easy_setopt_long(easy, Int32(PFC_OPT_TCP_KEEPALIVE), 1)
        pfc_easy_setopt_long(easy, Int32(PFC_OPT_TCP_KEEPIDLE), 30)
        pfc_easy_setopt_long(easy, Int32(PFC_OPT_TCP_KEEPINTVL), 10)
        pfc_easy_setopt_long(easy, Int32(PFC_OPT_HTTP_VERSION), Int(PFC_HTTP_VERSION_2TLS))
        if let proxy = settings.proxy { pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_PROXY), proxy) }
        if request.url.scheme?.lowercased() == "https" {
            // Wait for a connection that may multiplex (HTTP/2) rather than open another one per request.
            pfc_easy_setopt_long(easy, Int32(PFC_OPT_PIPEWAIT), 1)
            if let authorities = settings.authorities {
                // One bundle file and no CA directory: libcurl then keeps the parsed store for the multi handle's
                // connections (CURLOPT_CA_CACHE_TIMEOUT, 24 h) instead of reading the whole system store again for
                // each new TLS connection (35 ms of CPU each here, against 2 ms).
                pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_CAINFO), authorities)
                pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_CAPATH), nil)
            }
        }
        let milliseconds = Self.milliseconds(request.timeout)
        pfc_easy_setopt_long(easy, Int32(PFC_OPT_CONNECTTIMEOUT_MS), milliseconds)
        // A whole exchange is bounded by libcurl; a stream only until its head is in (the engine watches that).
        if !isStream { pfc_easy_setopt_long(easy, Int32(PFC_OPT_TIMEOUT_MS), milliseconds) }

        try setMethodAndBody(easy)
        try setHeaders(easy)
        setContentDecoding(easy)

        pfc_easy_setopt_callback(easy, Int32(PFC_OPT_HEADERFUNCTION)) { data, size, count, context in
            guard let data, let context else { return 0 }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            return transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
        }
        pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_HEADERDATA), context)
        pfc_easy_setopt_callback(easy, Int32(PFC_OPT_WRITEFUNCTION)) { data, size, count, context in
            guard let data, let context else { return 0 }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
        }
        pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_WRITEDATA), context)
    }

    /// Gives the easy handle back to the engine once the transfer has ended (left the multi handle and answered its
    /// caller), for a later transfer; the transfer no longer touches it.
    func releaseHandle() -> UnsafeMutableRawPointer? {
        defer { easy = nil }
        return easy
    }

    private static func milliseconds(_ seconds: TimeInterval) -> Int {
        guard seconds.isFinite, seconds > 0 else { return 1 }
        return Int(min(seconds, 864_000) * 1000)
    }

    private func setMethodAndBody(_ easy: UnsafeMutableRawPointer) throws {
        let method = request.method.uppercased()
        guard !method.isEmpty, method.allSatisfy({ $0.isLetter }) else {
            throw ProfirestUsageError("the HTTP method \"\(request.method)\" is not a method")
        }
        switch (method, request.body) {
        case ("GET", nil):
            pfc_easy_setopt_long(easy, Int32(PFC_OPT_HTTPGET), 1)
            return
        case ("HEAD", nil):
            pfc_easy_setopt_long(easy, Int32(PFC_OPT_NOBODY), 1)
            return
        case ("POST", _):
            pfc_easy_setopt_long(easy, Int32(PFC_OPT_POST), 1)
        default:
            pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_CUSTOMREQUEST), method)
        }
        guard method == "POST" || request.body != nil else { return }
        let data = request.body ?? Data()
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, data.count), alignment: 1)
        data.copyBytes(to: bytes)
        bodyBytes = bytes
        pfc_easy_setopt_offset(easy, Int32(PFC_OPT_POSTFIELDSIZE_LARGE), Int64(data.count))
        pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_POSTFIELDS), bytes.baseAddress)
    }

    /// The request's headers exactly as set, and none of libcurl's own defaults that the request did not ask for.
    private func setHeaders(_ easy: UnsafeMutableRawPointer) throws {
        var list: UnsafeMutableRawPointer?
        func append(_ line: String) throws {
            guard let appended = pfc_slist_append(list, line) else {
                if let list { pfc_slist_free_all(list) }
                throw URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "curl_slist_append failed"])
            }
            list = appended
        }
        var hasAccept = false
        var hasContentType = false
        var hasExpect = false
        for (name, value) in request.headers {
            // Bytes, not Characters: "\r\n" is a single Character in Swift.
            guard !name.isEmpty, !name.utf8.contains(where: { $0 == UInt8(ascii: ":") || $0 <= 0x20 || $0 == 0x7F }),
                  !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                if let list { pfc_slist_free_all(list) }
                throw ProfirestUsageError("the header \"\(name)\" cannot be sent: its name or value has a line break or a colon")
            }
            if !hasAccept, HeadBytes.equalsIgnoringCase(name, "Accept") { hasAccept = true }
            if !hasContentType, HeadBytes.equalsIgnoringCase(name, "Content-Type") { hasContentType = true }
            if !hasExpect, HeadBytes.equalsIgnoringCase(name, "Expect") { hasExpect = true }
            let trimmed = HeadBytes.trimmed(value)
            // libcurl reads "Name:" as "remove this header" and "Name;" as "send it empty".
            try append(trimmed.isEmpty ? name + ";" : name + ": " + trimmed)
        }
        // libcurl would add `Accept: */*`, a form Content-Type to a body, and `Expect: 100-continue` to a large one.
        if !hasAccept { try append("Accept:") }
        if bodyBytes != nil, !hasContentType { try append("Content-Type:") }
        if !hasExpect { try append("Expect:") }
        headerList = list
        pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_HTTPHEADER), list)
    }

    /// Compressed answers, as URLSession has them: libcurl offers every encoding it was built with (gzip and deflate
    /// always; br and zstd when built in) and hands over the decoded body, chunk by chunk as it comes, so a stream
    /// stays live. A caller's own `Accept-Encoding` header goes instead of libcurl's, and an answer in an encoding
    /// libcurl knows still comes decoded — what URLSession does on every platform (checked on Linux), so one code
    /// reads the same bytes with either transport.
    private func setContentDecoding(_ easy: UnsafeMutableRawPointer) {
        pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_ACCEPT_ENCODING), "")
    }

    // MARK: Receiving (libcurl's callbacks, on the engine's thread)

    /// One line of the head. False aborts the transfer (a head past `headLimit`, or a line that is not a header).
    ///
    /// Read as bytes: a String is made only for a header's name and value, never for the whole line.
    private func receiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        if headDone { return true }  // trailers of a chunked body: not used
        headBytes += line.count
        if headBytes > Self.headLimit {
            malformedHead = "a response head over \(Self.headLimit / 1024) KB"
            return false
        }
        // Without its line ending (bytes: "\r\n" is one Character in Swift).
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        let text = UnsafeRawBufferPointer(rebasing: line[..<end])
        if HeadBytes.hasPrefix(text, "HTTP/") {
            // A new response: an interim 1xx before the real one starts again.
            guard let code = HeadBytes.statusCode(text) else {
                malformedHead = "a malformed status line"
                return false
            }
            status = code
            headers.removeAll(keepingCapacity: true)
            lastHeader = nil
            contentLengthName = nil
            return true
        }
        if text.isEmpty { return endHead() }
        if text[0] == 0x20 || text[0] == 0x09, let name = lastHeader {
            // An obsolete folded line continues the previous header.
            headers[name, default: ""] += " " + HeadBytes.trimmed(text)
            return true
        }
        guard let colon = text.firstIndex(of: UInt8(ascii: ":")), colon != 0 else {
            malformedHead = "a header line without a name"
            return false
        }
        let nameBytes = UnsafeRawBufferPointer(rebasing: text[..<colon])
        let name = HeadBytes.string(nameBytes)
        let value = HeadBytes.trimmed(UnsafeRawBufferPointer(rebasing: text[(colon + 1)...]))
        if let existing = headers[name] {
            headers[name] = existing + ", " + value
        } else {
            headers[name] = value
        }
        lastHeader = name
        if HeadBytes.equalsIgnoringCase(nameBytes, "content-length") { contentLengthName = name }
        return true
    }

    /// The blank line after a head: a final answer's head is complete (an interim 1xx's is skipped).
    private func endHead() -> Bool {
        if status >= 200, case .whole = waiter, request.method != "HEAD", let limit = request.maxResponseBytes,
            let declared = contentLengthName.flatMap({ headers[$0] }).flatMap({ Int($0) })
        {
            // Refused before a byte of the body is read; otherwise room for it at once, not grown by copies.
            if declared > limit {
                tooLarge = true
                return false
            }
            body.reserveCapacity(declared)
        }
        if status >= 200 {
            headDone = true
            deliverHead()
        }
        return true
    }

    private func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        switch waiter {
        case .whole:
            if let limit = request.maxResponseBytes, body.count + bytes.count > limit {
                tooLarge = true
                return 0  // aborts the transfer
            }
            // The typed buffer: Data copies it at once, where a raw buffer goes through the generic Sequence path.
            body.append(bytes.assumingMemoryBound(to: UInt8.self))
            return bytes.count
        case .stream(_, let streamBody):
            return streamBody.offer(Data(buffer: bytes.assumingMemoryBound(to: UInt8.self))) ? bytes.count : Int(PFC_WRITEFUNC_PAUSE)
        case nil:
            return bytes.count
        }
    }

    private func deliverHead() {
        guard case .stream(let head, _) = waiter else { return }
        head.resume(returning: APIResponse(status: status, headers: headers))
    }

    // MARK: Ending (on the engine's thread)

    /// Ends the transfer with libcurl's result; the caller is answered exactly once.
    func complete(result: Int32) {
        if tooLarge {
            fail(ResponseTooLarge(limit: request.maxResponseBytes ?? 0))
            return
        }
        if result == PFC_E_OK, status != 0, !headDone {
            // The connection closed inside the head: libcurl may call that a complete answer, it is a cut one.
            fail(URLError(.networkConnectionLost, userInfo: [NSLocalizedDescriptionKey: "the answer ended inside its head"]))
            return
        }
        if result == PFC_E_OK {
            // A response whose status line the callback did not see (it always should): libcurl's own reading.
            if status == 0, let easy {
                var code = 0
                pfc_easy_getinfo_long(easy, Int32(PFC_INFO_RESPONSE_CODE), &code)
                status = code
            }
            succeed()
            return
        }
        if let malformedHead {
            fail(URLError(.cannotParseResponse, userInfo: [NSLocalizedDescriptionKey: "the server sent \(malformedHead)"]))
            return
        }
        // A forward proxy that wants its own login answers the CONNECT with 407; that answer is the caller's.
        var connectCode = 0
        if let easy { pfc_easy_getinfo_long(easy, Int32(PFC_INFO_HTTP_CONNECTCODE), &connectCode) }
        if connectCode == 407, !headDone {
            status = 407
            headers = [:]
            headDone = true
            succeed()
            return
        }
        if result == PFC_E_BAD_CONTENT_ENCODING {
            // The body said it was compressed and was not what it said: the API never sends that.
            let encoding = HTTPHeaders.value("Content-Encoding", in: headers) ?? "unknown"
            let reason = "the body could not be decoded from its Content-Encoding \"\(encoding)\" "
                + "(libcurl: \(String(cString: pfc_easy_strerror(result))))"
            fail(URLError(.cannotParseResponse, userInfo: [NSLocalizedDescriptionKey: reason]))
            return
        }
        fail(LibCurl.error(result))
    }

    private func succeed() {
        switch waiter {
        case .whole(let continuation):
            continuation.resume(returning: APIResponse(status: status, headers: headers, data: body))
        case .stream(let head, let streamBody):
            if !headDone { head.resume(returning: APIResponse(status: status, headers: headers)) }
            streamBody.finish(throwing: nil)
        case nil:
            break
        }
        waiter = nil
    }

    /// Ends the transfer with `error` (a cancellation, an expired head deadline, a failure).
    func fail(_ error: Error) {
        switch waiter {
        case .whole(let continuation):
            continuation.resume(throwing: error)
        case .stream(let head, let streamBody):
            if !headDone { head.resume(throwing: error) }
            streamBody.finish(throwing: error)
        case nil:
            break
        }
        waiter = nil
    }

    /// Lets a paused stream go on (the reader made room).
    func resumeReceiving() {
        if let easy { pfc_easy_pause(easy, Int32(PFC_PAUSE_CONT)) }
    }
}

/// What every transfer of one transport shares.
struct CurlSettings: Sendable {
    /// The PEM bundle file of the certificate authorities to trust — the system's, plus the extra ones in a file of the
    /// transport's own — or nil for libcurl's default (a bundle and a directory).
    var authorities: String?
    /// The most of a stream's body that waits unread before the transfer is paused.
    var streamBufferLimit: Int
    /// A forward proxy for every request, or nil for libcurl's environment (`https_proxy`, `no_proxy`…).
    var proxy: String?
}
#endif
