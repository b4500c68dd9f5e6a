// The floor of the library's Linux stack: the same GET and POST loops as the other variants of main.swift, sent by
// libcurl driven directly by the bench, through the library's own C wrappers (CProfirestCurl's `pfc_*`), with no
// Swift concurrency, no pipeline and no transport in between:
//
//   curl        one easy handle, reused for every request (kept-alive connection), on one multi handle that a thread
//               of its own drives (perform, read what finished, poll); sequential requests one after the other, and
//               64 easy handles in flight at once on the same multi handle for the concurrent run (each re-added as
//               soon as its answer is decoded, until tasks × perTask requests are done)
//   post-curl   the same for the ~200-byte JSON POST with a fresh Idempotency-Key (a new header list and body for
//               each request, encoded as the library encodes it)
//   curl-new-handle  the GET loop with a new easy handle for every request: what a new handle costs against a
//               reused one, apart from the thread hops a transport adds
//
// Each answer is checked (200) and decoded with JSONDecoder as the raw URLSession variants decode theirs. A whole
// batch runs on the thread; the async caller waits for the batch once, so the per-request figure has no thread hop in
// it: what libcurl itself costs, which `…_ratio_vs_curl` divides the library by.
#if os(Linux)
import CProfirestCurl
import Foundation

/// A request the direct libcurl loop sends: the fixed URL and headers, the per-request extras, the body and how to
/// read the answer.
struct DirectCurlRequest: Sendable {
    var url: String
    var headers: [String]
    /// Headers made anew for each request (the Idempotency-Key).
    var freshHeaders: @Sendable () -> [String] = { [] }
    /// The body of each request (encoded per request, as the library does), or nil for a GET.
    var body: (@Sendable () throws -> Data)?
    /// Reads a 200's body; returns something to keep the decoding from being optimised away.
    var decode: @Sendable (Data) throws -> Int
}

/// One easy handle and what it needs to live as long as its transfer: the answer's bytes, the header list, the body.
final class DirectCurlHandle {
    let easy: UnsafeMutableRawPointer
    var received = Data()
    private var headerList: UnsafeMutableRawPointer?
    private var bodyBytes: UnsafeMutableRawBufferPointer?

    init(_ request: DirectCurlRequest) throws {
        guard let easy = pfc_easy_init() else { throw BenchFailure("curl_easy_init failed") }
        self.easy = easy
        pfc_easy_setopt_long(easy, Int32(PFC_OPT_NOSIGNAL), 1)
        pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_URL), request.url)
        pfc_easy_setopt_long(easy, Int32(PFC_OPT_TCP_NODELAY), 1)
        if request.body != nil {
            pfc_easy_setopt_long(easy, Int32(PFC_OPT_POST), 1)
        } else {
            pfc_easy_setopt_long(easy, Int32(PFC_OPT_HTTPGET), 1)
        }
        pfc_easy_setopt_callback(easy, Int32(PFC_OPT_WRITEFUNCTION)) { data, size, count, context in
            guard let data, let context else { return 0 }
            let handle = Unmanaged<DirectCurlHandle>.fromOpaque(context).takeUnretainedValue()
            handle.received.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: size * count)
            return size * count
        }
        pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_WRITEDATA), Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        pfc_easy_cleanup(easy)
        if let headerList { pfc_slist_free_all(headerList) }
        bodyBytes?.deallocate()
    }

    /// Sets up the next request on this handle: its headers (the fixed ones and fresh ones) and its body.
    func prepare(_ request: DirectCurlRequest) throws {
        received.removeAll(keepingCapacity: true)
        var list: UnsafeMutableRawPointer?
        for line in request.headers + request.freshHeaders() { list = pfc_slist_append(list, line) }
        pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_HTTPHEADER), list)
        if let old = headerList { pfc_slist_free_all(old) }
        headerList = list
        if let makeBody = request.body {
            let data = try makeBody()
            bodyBytes?.deallocate()
            let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, data.count), alignment: 1)
            data.copyBytes(to: bytes)
            bodyBytes = bytes
            pfc_easy_setopt_offset(easy, Int32(PFC_OPT_POSTFIELDSIZE_LARGE), Int64(data.count))
            pfc_easy_setopt_pointer(easy, Int32(PFC_OPT_POSTFIELDS), bytes.baseAddress)
        }
    }
}

/// libcurl's multi handle and the easy handles of one request kind, driven by a thread started for each batch (one
/// thread at a time uses the multi handle; the continuation orders one batch after the other).
final class DirectCurl: @unchecked Sendable {
    // @unchecked: the multi handle and the easy handles are used by one batch's thread at a time, and batches run one
    // after the other (each awaited before the next starts).
    private let multi: UnsafeMutableRawPointer
    private let request: DirectCurlRequest
    private var handles: [DirectCurlHandle] = []
    /// A new easy handle for each request instead of reusing one.
    private let newHandlePerRequest: Bool

    /// Loads libcurl (as the library does: the soname, then the -dev name) once for the process.
    static func load() throws {
        var message = [CChar](repeating: 0, count: 512)
        let libraries: [String] = ["libcurl.so.4", "libcurl.so"]
        let names: [UnsafeMutablePointer<CChar>?] = libraries.map { strdup($0) }
        defer { names.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = names.map { $0.map { UnsafePointer($0) } }
        let status = pointers.withUnsafeBufferPointer { pfc_load($0.baseAddress!, Int32(names.count), &message, message.count) }
        guard status == 0 else {
            throw BenchFailure("pfc_load: " + String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    init(_ request: DirectCurlRequest, newHandlePerRequest: Bool = false) throws {
        self.newHandlePerRequest = newHandlePerRequest
        try Self.load()
        guard let multi = pfc_multi_init() else { throw BenchFailure("curl_multi_init failed") }
        self.multi = multi
        self.request = request
        pfc_multi_setopt_long(multi, Int32(PFC_MOPT_MAXCONNECTS), 128)
    }

    deinit {
        handles.removeAll()
        pfc_multi_cleanup(multi)
    }

    /// Milliseconds per request of `count` requests one after the other on one easy handle.
    func sequential(count: Int) async throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await batch(total: count, inFlight: 1)
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 / Double(count)
    }

    /// Milliseconds of wall time per request, `tasks` in flight at once, `tasks × perTask` in all.
    func concurrent(tasks: Int, perTask: Int) async throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await batch(total: tasks * perTask, inFlight: tasks)
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 / Double(tasks * perTask)
    }

    private func batch(total: Int, inFlight: Int) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            let thread = Thread { [self] in
                do {
                    try drive(total: total, inFlight: inFlight)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.name = "ProfirestBench.DirectCurl"
            thread.start()
        }
    }

    /// The loop on the batch's thread: `inFlight` transfers on the multi handle, each handle re-added as soon as its
    /// answer is decoded, until `total` are done.
    private func drive(total: Int, inFlight: Int) throws {
        while handles.count < inFlight { handles.append(try DirectCurlHandle(request)) }
        var byEasy: [UnsafeMutableRawPointer: Int] = [:]  // the index in `handles`
        var started = 0
        var done = 0
        func start(_ index: Int) throws {
            let handle = handles[index]
            try handle.prepare(request)
            byEasy[handle.easy] = index
            pfc_multi_add_handle(multi, handle.easy)
            started += 1
        }
        for index in 0..<min(inFlight, total) { try start(index) }
        defer { for easy in byEasy.keys { pfc_multi_remove_handle(multi, easy) } }
        while done < total {
            var running: Int32 = 0
            pfc_multi_perform(multi, &running)
            var easy: UnsafeMutableRawPointer?
            var result: Int32 = 0
            var restarted = false
            while pfc_multi_next_done(multi, &easy, &result) == 1 {
                guard let easy, let index = byEasy.removeValue(forKey: easy) else { continue }
                let handle = handles[index]
                pfc_multi_remove_handle(multi, easy)
                guard result == PFC_E_OK else {
                    throw BenchFailure("direct curl: \(String(cString: pfc_easy_strerror(result))) (CURLcode \(result))")
                }
                var status = 0
                pfc_easy_getinfo_long(easy, Int32(PFC_INFO_RESPONSE_CODE), &status)
                guard status == 200 else { throw BenchFailure("direct curl: status \(status)") }
                _ = try request.decode(handle.received)
                done += 1
                if started < total {
                    if newHandlePerRequest { handles[index] = try DirectCurlHandle(request) }
                    try start(index)
                    restarted = true
                }
            }
            // A handle just added wants perform at once; otherwise sleep until a socket or a timer of libcurl's wakes.
            if done < total && !restarted {
                var ready: Int32 = 0
                pfc_multi_poll(multi, 1000, &ready)
            }
        }
    }
}
#endif
