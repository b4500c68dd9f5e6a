#if os(Linux) && !PROFIREST_NO_CURL
import CProfirestCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One libcurl multi handle of a `CurlEngine` — its own connection pool — with the timer libcurl set for it.
///
/// Used only on the engine's thread. The engine keeps several so that event streams over HTTP/2 spread over a few
/// connections instead of one: libcurl (7.88) answers every read on a connection by running every transfer that
/// shares it, so an event on a connection carrying a thousand streams costs a thousand transfers' bookkeeping.
final class CurlMulti {
    let handle: UnsafeMutableRawPointer
    /// When libcurl's timer for this handle is due (monotonic nanoseconds), or nil when it set none.
    var timerDue: UInt64?

    /// - Parameters:
    ///   - watch: called by libcurl (on the engine's thread) with a socket to watch for `PFC_POLL_*`, or to forget.
    init(watch: @escaping (_ socket: Int32, _ what: Int32, _ multi: CurlMulti) -> Void) throws {
        guard let handle = pfc_multi_init() else {
            throw URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "curl_multi_init failed"])
        }
        self.handle = handle
        self.watch = watch
        pfc_multi_setopt_long(handle, Int32(PFC_MOPT_PIPELINING), Int(PFC_PIPE_MULTIPLEX))
        // Enough idle connections for 64 requests in flight over HTTP/1.1 to find theirs again.
        pfc_multi_setopt_long(handle, Int32(PFC_MOPT_MAXCONNECTS), 128)
        // As many streams on one HTTP/2 connection as the server allows (its SETTINGS_MAX_CONCURRENT_STREAMS; nginx:
        // 128 unless configured). libcurl's own cap is 100, and beyond it each request that came while a new
        // connection was still in its TLS handshake opened yet another: a thousand event streams took 102 TCP
        // connections through nginx allowing 2,000 streams on one.
        pfc_multi_setopt_long(handle, Int32(PFC_MOPT_MAX_CONCURRENT_STREAMS), 10_000)
        // Unretained: the engine cleans the handle up (`close`) while this object lives.
        let context = Unmanaged.passUnretained(self).toOpaque()
        pfc_multi_setopt_socket_callback(handle, Self.socketCallback, context)
        pfc_multi_setopt_timer_callback(handle, Self.timerCallback, context)
    }

    private let watch: (Int32, Int32, CurlMulti) -> Void

    private static let socketCallback: pfc_socket_callback = { _, socket, what, context, _ in
        guard let context else { return -1 }
        let multi = Unmanaged<CurlMulti>.fromOpaque(context).takeUnretainedValue()
        multi.watch(socket, what, multi)
        return 0
    }

    private static let timerCallback: pfc_timer_callback = { _, milliseconds, context in
        guard let context else { return -1 }
        let multi = Unmanaged<CurlMulti>.fromOpaque(context).takeUnretainedValue()
        multi.timerDue = milliseconds < 0 ? nil : DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
        return 0
    }

    /// Tells libcurl its timer fired, when it is due (it may set the next one meanwhile).
    func fireTimerIfDue(now: UInt64) {
        guard let due = timerDue, due <= now else { return }
        timerDue = nil
        var running: Int32 = 0
        pfc_multi_socket_action(handle, Int32(PFC_SOCKET_TIMEOUT), 0, &running)
    }

    /// Hands libcurl a socket that is ready (`PFC_CSELECT_*`).
    func socketReady(_ socket: Int32, _ readiness: Int32) {
        var running: Int32 = 0
        pfc_multi_socket_action(handle, socket, readiness, &running)
    }

    /// The next transfer libcurl finished, with its result, or nil.
    func nextDone() -> (easy: UnsafeMutableRawPointer, result: Int32)? {
        var easy: UnsafeMutableRawPointer?
        var result: Int32 = 0
        while pfc_multi_next_done(handle, &easy, &result) == 1 {
            if let easy { return (easy, result) }
        }
        return nil
    }

    func close() { pfc_multi_cleanup(handle) }
}
#endif
