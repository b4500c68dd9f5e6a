#if os(Linux) && !PROFIREST_NO_CURL
import CProfirestCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
/// A few libcurl multi handles and the one thread that drives them: every transfer of a `CurlTransport` — whole
/// requests and streams alike — runs here, and its connections are kept and shared (HTTP/1.1 keep-alive, HTTP/2
/// multiplexing).
///
/// libcurl wants a multi handle used by one thread at a time, so other threads only post commands and wake the
/// thread (an eventfd). The thread drives libcurl by its event interface (`curl_multi_socket_action`): libcurl says
/// which sockets to watch and when its next timer is due, the thread waits in `epoll_wait` for those alone, and on
/// each wake-up hands libcurl only the sockets that are ready.
///
/// Whole requests all go to the first multi handle, so they find its kept-alive connections again; event streams
/// take the handles in turn (see `CurlMulti` for why): over HTTP/2 a thousand streams share four connections, not one. An idle connection or a quiet stream costs nothing, and
/// a wake-up costs the same whether one stream is open or a thousand. Not `curl_multi_perform` with
/// `curl_multi_poll`: that polls every socket and walks every transfer on each wake-up, and with a thousand quiet
/// event streams their keep-alives alone take 2 % of a core.
final class CurlEngine: @unchecked Sendable {
    // @unchecked: `inbox` and `stopped` are guarded by `lock`; `transfers`, the multi handles and the socket table
    // are the engine thread's alone.
    private enum Command {
        case start(CurlTransfer)
        case cancel(CurlTransfer)
        case resume(CurlTransfer)
    }

    /// The multi handles: whole requests use the first, streams each in turn.
    private let multis: [CurlMulti]
    /// How many multi handles streams are spread over: at most this many HTTP/2 connections to one server.
    static let multiCount = 4
    /// The multi handle the next stream goes to (engine thread only).
    private var nextStreamMulti = 0
    /// Which multi handle each watched socket belongs to.
    private let owners: SocketOwners
    private let settings: CurlSettings
    private let lock = NSLock()
    private var inbox: [Command] = []
    private var stopped = false
    private var transfers: [UnsafeMutableRawPointer: (transfer: CurlTransfer, multi: CurlMulti)] = [:]
    /// Streams whose head has not come yet, for their deadline.
    private var awaitingHead: [ObjectIdentifier: CurlTransfer] = [:]
    /// The epoll set of the sockets libcurl asked to watch (CProfirestCurl's poller.c).
    private let poller: Int32
    /// Wakes the thread out of `epoll_wait` when a command is posted (an eventfd in the epoll set).
    private let waker: Int32
    /// Easy handles of ended transfers, reset to libcurl's defaults, for the next ones: a new handle costs libcurl
    /// large allocations (its receive buffer, its state) that a reset handle keeps.
    private var idleHandles: [UnsafeMutableRawPointer] = []
    /// The most idle handles kept: enough for the requests in flight at once, as many as idle connections.
    private static let idleHandleLimit = 128

    init(settings: CurlSettings) throws {
        let poller = pfc_poller_create()
        let waker = pfc_waker_create()
        guard poller >= 0, waker >= 0, pfc_poller_watch(poller, waker, Int32(PFC_POLL_IN)) == 0 else {
            if poller >= 0 { close(poller) }
            if waker >= 0 { close(waker) }
            throw URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "epoll or eventfd could not be made"])
        }
        var multis: [CurlMulti] = []
        do {
            // Each socket libcurl watches is remembered with its multi handle, to hand it back to that one; called on
            // the engine's thread only (from inside its calls into libcurl), so the table needs no lock.
            let owners = SocketOwners(poller: poller)
            for _ in 0..<Self.multiCount { multis.append(try CurlMulti(watch: owners.watch)) }
            self.owners = owners
        } catch {
            multis.forEach { $0.close() }
            close(poller)
            close(waker)
            throw error
        }
        self.multis = multis
        self.settings = settings
        self.poller = poller
        self.waker = waker
        let thread = Thread { [self] in
            // CurlTransportTests and the bench find the engine's thread by this name (see ThreadName).
            ThreadName.nameCurrentThread("ProfirestCurl")
            run()
        }
        thread.start()
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
            for index in 0..<Int(count) {
                if sockets[index] == waker {
                    pfc_waker_drain(waker)
                } else if let multi = owners.multi(of: sockets[index]) {
                    multi.socketReady(sockets[index], readiness[index])
                }
            }
            collectFinished()
        }
        for (transfer, _) in transfers.values {
            remove(transfer)
            transfer.fail(URLError(.cancelled, userInfo: [NSLocalizedDescriptionKey: "the transport was released"]))
        }
        transfers.removeAll()
        multis.forEach { $0.close() }
        for easy in idleHandles { pfc_easy_cleanup(easy) }
        idleHandles.removeAll()
        lock.lock()
        close(waker)
        lock.unlock()
        close(poller)
    }

    /// Tells each multi handle whose timer is due that it fired.
    private func fireTimerIfDue() {
        let now = DispatchTime.now().uptimeNanoseconds
        for multi in multis { multi.fireTimerIfDue(now: now) }
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
                var multi = multis[0]
                if transfer.isStream {
                    multi = multis[nextStreamMulti]
                    nextStreamMulti = (nextStreamMulti + 1) % multis.count
                }
                transfers[easy] = (transfer, multi)
                if transfer.awaitsHead, transfer.headDeadline != nil { awaitingHead[ObjectIdentifier(transfer)] = transfer }
                pfc_multi_add_handle(multi.handle, easy)
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
        for multi in multis {
            while let (easy, result) = multi.nextDone() {
                guard let (transfer, _) = transfers[easy] else { continue }
                remove(transfer)
                transfer.complete(result: result)
                recycle(transfer)
            }
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
        guard let easy = transfer.easy, let (_, multi) = transfers[easy] else { return }
        pfc_multi_remove_handle(multi.handle, easy)
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
        for multi in multis {
            guard let due = multi.timerDue else { continue }
            milliseconds = min(milliseconds, due > now ? Int((due - now + 999_999) / 1_000_000) : 0)
        }
        for transfer in awaitingHead.values {
            guard let deadline = transfer.headDeadline else { continue }
            let left = deadline > now ? Int((deadline - now) / 1_000_000) + 1 : 0
            milliseconds = min(milliseconds, left)
        }
        return Int32(min(milliseconds, 60_000))
    }
}

/// The sockets libcurl asked the engine to watch, each with the multi handle it belongs to; used on the engine's thread
/// only (libcurl calls `watch` from inside the engine's calls into it).
private final class SocketOwners {
    private let poller: Int32
    private var owners: [Int32: CurlMulti] = [:]

    init(poller: Int32) { self.poller = poller }

    /// libcurl wants `socket` watched for `what` (`PFC_POLL_*`), or no longer watched (`PFC_POLL_REMOVE`).
    func watch(_ socket: Int32, _ what: Int32, _ multi: CurlMulti) {
        owners[socket] = what == Int32(PFC_POLL_REMOVE) ? nil : multi
        _ = pfc_poller_watch(poller, socket, what)
    }

    func multi(of socket: Int32) -> CurlMulti? { owners[socket] }
}
#endif
