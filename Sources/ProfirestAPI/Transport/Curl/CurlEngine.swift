#if os(Linux) && !PROFIREST_NO_CURL
import CProfirestCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
/// One libcurl multi handle and the one thread that drives it: every transfer of a `CurlTransport` — whole
/// requests and streams alike — runs here, and its connections are kept and shared (HTTP/1.1 keep-alive, HTTP/2
/// multiplexing).
///
/// libcurl wants a multi handle used by one thread at a time, so other threads only post commands and wake the
/// thread (an eventfd). The thread drives libcurl by its event interface (`curl_multi_socket_action`): libcurl says
/// which sockets to watch and when its next timer is due, the thread waits in `epoll_wait` for those alone, and on
/// each wake-up hands libcurl only the sockets that are ready. An idle connection or a quiet stream costs nothing, and
/// a wake-up costs the same whether one stream is open or a thousand. Not `curl_multi_perform` with
/// `curl_multi_poll`: that polls every socket and walks every transfer on each wake-up, and with a thousand quiet
/// event streams their keep-alives alone take 2 % of a core.
final class CurlEngine: @unchecked Sendable {
    // @unchecked: `inbox` and `stopped` are guarded by `lock`; `transfers` and the multi handle's use are the
    // engine thread's alone.
    private enum Command {
        case start(CurlTransfer)
        case cancel(CurlTransfer)
        case resume(CurlTransfer)
    }

    private let multi: UnsafeMutableRawPointer
    private let settings: CurlSettings
    private let lock = NSLock()
    private var inbox: [Command] = []
    private var stopped = false
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Streams whose head has not come yet, for their deadline.
    private var awaitingHead: [ObjectIdentifier: CurlTransfer] = [:]
    /// The epoll set of the sockets libcurl asked to watch (CProfirestCurl's poller.c).
    private let poller: Int32
    /// Wakes the thread out of `epoll_wait` when a command is posted (an eventfd in the epoll set).
    private let waker: Int32
    /// When libcurl's timer is due (monotonic nanoseconds), or nil when it set none.
    private var timerDue: UInt64?
    /// Easy handles of ended transfers, reset to libcurl's defaults, for the next ones: a new handle costs libcurl
    /// large allocations (its receive buffer, its state) that a reset handle keeps.
    private var idleHandles: [UnsafeMutableRawPointer] = []
    /// The most idle handles kept: enough for the requests in flight at once, as many as idle connections.
    private static let idleHandleLimit = 128

    init(settings: CurlSettings) throws {
        guard let multi = pfc_multi_init() else {
            throw URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "curl_multi_init failed"])
        }
        let poller = pfc_poller_create()
        let waker = pfc_waker_create()
        guard poller >= 0, waker >= 0, pfc_poller_watch(poller, waker, Int32(PFC_POLL_IN)) == 0 else {
            if poller >= 0 { close(poller) }
            if waker >= 0 { close(waker) }
            pfc_multi_cleanup(multi)
            throw URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "epoll or eventfd could not be made"])
        }
        self.multi = multi
        self.settings = settings
        self.poller = poller
        self.waker = waker
        pfc_multi_setopt_long(multi, Int32(PFC_MOPT_PIPELINING), Int(PFC_PIPE_MULTIPLEX))
        // Enough idle connections for 64 requests in flight over HTTP/1.1 to find theirs again.
        pfc_multi_setopt_long(multi, Int32(PFC_MOPT_MAXCONNECTS), 128)
        // As many streams on one HTTP/2 connection as the server allows (its SETTINGS_MAX_CONCURRENT_STREAMS; nginx:
        // 128 unless configured). libcurl's own cap is 100, and beyond it each request that came while a new
        // connection was still in its TLS handshake opened yet another: a thousand event streams took 102 TCP
        // connections through nginx allowing 2,000 streams on one.
        pfc_multi_setopt_long(multi, Int32(PFC_MOPT_MAX_CONCURRENT_STREAMS), 10_000)
        // Unretained: the thread cleans the multi handle up (its last callback) before the engine can go.
        let context = Unmanaged.passUnretained(self).toOpaque()
        pfc_multi_setopt_socket_callback(multi, Self.socketCallback, context)
        pfc_multi_setopt_timer_callback(multi, Self.timerCallback, context)
        let thread = Thread { [self] in
            // CurlTransportTests and the bench find the engine's thread by this name (see ThreadName).
            ThreadName.nameCurrentThread("ProfirestCurl")
            run()
        }
        thread.start()
    }

    private static let socketCallback: pfc_socket_callback = { _, socket, what, context, _ in
        guard let context else { return -1 }
        Unmanaged<CurlEngine>.fromOpaque(context).takeUnretainedValue().watch(socket, what)
        return 0
    }

    private static let timerCallback: pfc_timer_callback = { _, milliseconds, context in
        guard let context else { return -1 }
        Unmanaged<CurlEngine>.fromOpaque(context).takeUnretainedValue().setTimer(milliseconds)
        return 0
    }

    /// Stops the thread once it has ended every transfer still running; called when the transport goes away.
    func stop() {
        lock.lock()
        stopped = true
        wake()
        lock.unlock()
    }

    func start(_ transfer: CurlTransfer) { post(.start(transfer)) }

    /// Cancels `transfer` wherever it is; a no-op once it ended.
    func cancel(_ transfer: CurlTransfer) {
        if transfer.markCancelled() { post(.cancel(transfer)) }
    }

    /// Resumes a stream paused because its reader was behind.
    func resume(_ transfer: CurlTransfer) { post(.resume(transfer)) }

    var streamBufferLimit: Int { settings.streamBufferLimit }

    private func post(_ command: Command) {
        lock.lock()
        defer { lock.unlock() }
        if stopped {
            if case .start(let transfer) = command {
                transfer.fail(URLError(.cancelled, userInfo: [NSLocalizedDescriptionKey: "the transport was released"]))
            }
            return
        }
        inbox.append(command)
        // Under the lock, so that the thread cannot close the eventfd between the check above and this call.
        wake()
    }

    private func wake() { pfc_waker_signal(waker) }

    // MARK: The engine's thread

    private func run() {
        let capacity = 256
        var sockets = [Int32](repeating: 0, count: capacity)
        var readiness = [Int32](repeating: 0, count: capacity)
        while true {
            lock.lock()
            let commands = inbox
            inbox.removeAll(keepingCapacity: true)
            let stopping = stopped
            lock.unlock()
            for command in commands { handle(command) }
            if stopping { break }
            fireTimerIfDue()
            collectFinished()
            let now = DispatchTime.now().uptimeNanoseconds
            expireHeads(now: now)
            let count = pfc_poller_wait(poller, waitTimeout(now: now), &sockets, &readiness, Int32(capacity))
            if count < 0 {
                // Polling itself failed (it should not): never turn that into a busy loop.
                usleep(10_000)
                continue
            }
            var running: Int32 = 0
            for index in 0..<Int(count) {
                if sockets[index] == waker {
                    pfc_waker_drain(waker)
                } else {
                    pfc_multi_socket_action(multi, sockets[index], readiness[index], &running)
                }
            }
            collectFinished()
        }
        for transfer in transfers.values {
            remove(transfer)
            transfer.fail(URLError(.cancelled, userInfo: [NSLocalizedDescriptionKey: "the transport was released"]))
        }
        transfers.removeAll()
        pfc_multi_cleanup(multi)
        for easy in idleHandles { pfc_easy_cleanup(easy) }
        idleHandles.removeAll()
        lock.lock()
        close(waker)
        lock.unlock()
        close(poller)
    }

    // MARK: libcurl's event interface (called by libcurl, on the engine's thread)

    /// libcurl wants `socket` watched for `what` (`PFC_POLL_*`), or no longer watched.
    private func watch(_ socket: Int32, _ what: Int32) {
        _ = pfc_poller_watch(poller, socket, what)
    }

    /// libcurl's timer: due in `milliseconds` (0: at once), or none (-1).
    private func setTimer(_ milliseconds: Int) {
        guard milliseconds >= 0 else {
            timerDue = nil
            return
        }
        timerDue = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
    }

    /// Tells libcurl its timer fired, when it is due (it may set the next one meanwhile).
    private func fireTimerIfDue() {
        guard let due = timerDue, due <= DispatchTime.now().uptimeNanoseconds else { return }
        timerDue = nil
        var running: Int32 = 0
        pfc_multi_socket_action(multi, Int32(PFC_SOCKET_TIMEOUT), 0, &running)
    }

    private func handle(_ command: Command) {
        switch command {
        case .start(let transfer):
            if transfer.isCancelled {
                transfer.fail(CancellationError())
                return
            }
            guard let easy = idleHandles.popLast() ?? pfc_easy_init() else {
                transfer.fail(URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "curl_easy_init failed"]))
                return
            }
            do {
                try transfer.configure(easy, settings)
                transfers[easy] = transfer
                if transfer.awaitsHead, transfer.headDeadline != nil { awaitingHead[ObjectIdentifier(transfer)] = transfer }
                pfc_multi_add_handle(multi, easy)
            } catch {
                transfer.fail(error)
                recycle(transfer)
            }
        case .cancel(let transfer):
            guard let easy = transfer.easy, transfers[easy] != nil else { return }  // ended, or never started
            remove(transfer)
            transfer.fail(CancellationError())
            recycle(transfer)
        case .resume(let transfer):
            guard let easy = transfer.easy, transfers[easy] != nil else { return }
            transfer.resumeReceiving()
        }
    }

    private func collectFinished() {
        var easy: UnsafeMutableRawPointer?
        var result: Int32 = 0
        while pfc_multi_next_done(multi, &easy, &result) == 1 {
            guard let handle = easy, let transfer = transfers[handle] else { continue }
            remove(transfer)
            transfer.complete(result: result)
            recycle(transfer)
        }
    }

    /// Takes the easy handle of an ended transfer back, reset (none of its request's options, headers or body go on
    /// to the next), for the next transfer.
    private func recycle(_ transfer: CurlTransfer) {
        guard let easy = transfer.releaseHandle() else { return }
        if idleHandles.count < Self.idleHandleLimit {
            pfc_easy_reset(easy)
            idleHandles.append(easy)
        } else {
            pfc_easy_cleanup(easy)
        }
    }

    private func remove(_ transfer: CurlTransfer) {
        guard let easy = transfer.easy else { return }
        pfc_multi_remove_handle(multi, easy)
        transfers[easy] = nil
        awaitingHead[ObjectIdentifier(transfer)] = nil
    }

    private func expireHeads(now: UInt64) {
        guard !awaitingHead.isEmpty else { return }
        for (id, transfer) in awaitingHead {
            if !transfer.awaitsHead {
                awaitingHead[id] = nil
            } else if let deadline = transfer.headDeadline, deadline <= now {
                remove(transfer)
                transfer.fail(URLError(.timedOut, userInfo: [NSLocalizedDescriptionKey: "no response head within the timeout"]))
                recycle(transfer)
            }
        }
    }

    /// How long the thread may sleep: until libcurl's timer or the next head deadline, at most a minute (ms).
    private func waitTimeout(now: UInt64) -> Int32 {
        var milliseconds = 60_000
        if let due = timerDue {
            milliseconds = due > now ? Int((due - now + 999_999) / 1_000_000) : 0
        }
        for transfer in awaitingHead.values {
            guard let deadline = transfer.headDeadline else { continue }
            let left = deadline > now ? Int((deadline - now) / 1_000_000) + 1 : 0
            milliseconds = min(milliseconds, left)
        }
        return Int32(min(milliseconds, 60_000))
    }
}
#endif
