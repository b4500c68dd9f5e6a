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
/// thread (`curl_multi_wakeup`, which is safe from any thread). The thread sleeps in `curl_multi_poll` until a
/// socket it needs is ready, a timer of libcurl's is due, or a command comes: an idle connection or a quiet stream
/// costs nothing.
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

    init(settings: CurlSettings) throws {
        guard let multi = pfc_multi_init() else {
            throw URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "curl_multi_init failed"])
        }
        self.multi = multi
        self.settings = settings
        pfc_multi_setopt_long(multi, Int32(PFC_MOPT_PIPELINING), Int(PFC_PIPE_MULTIPLEX))
        // Enough idle connections for 64 requests in flight over HTTP/1.1 to find theirs again.
        pfc_multi_setopt_long(multi, Int32(PFC_MOPT_MAXCONNECTS), 128)
        let thread = Thread { [self] in run() }
        thread.name = "ProfirestAPI.CurlEngine"
        thread.start()
    }

    /// Stops the thread once it has ended every transfer still running; called when the transport goes away.
    func stop() {
        lock.lock()
        stopped = true
        pfc_multi_wakeup(multi)
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
        // Under the lock, so that the multi handle cannot be cleaned up between the check above and this call.
        pfc_multi_wakeup(multi)
    }

    // MARK: The engine's thread

    private func run() {
        var running: Int32 = 0
        while true {
            lock.lock()
            let commands = inbox
            inbox.removeAll(keepingCapacity: true)
            let stopping = stopped
            lock.unlock()
            for command in commands { handle(command) }
            if stopping { break }
            pfc_multi_perform(multi, &running)
            collectFinished()
            let now = DispatchTime.now().uptimeNanoseconds
            expireHeads(now: now)
            var ready: Int32 = 0
            if pfc_multi_poll(multi, pollTimeout(now: now), &ready) != 0 {
                // Polling itself failed (it should not): never turn that into a busy loop.
                usleep(10_000)
            }
        }
        for transfer in transfers.values {
            remove(transfer)
            transfer.fail(URLError(.cancelled, userInfo: [NSLocalizedDescriptionKey: "the transport was released"]))
        }
        transfers.removeAll()
        pfc_multi_cleanup(multi)
    }

    private func handle(_ command: Command) {
        switch command {
        case .start(let transfer):
            if transfer.isCancelled {
                transfer.fail(CancellationError())
                return
            }
            do {
                let easy = try transfer.makeHandle(settings)
                transfers[easy] = transfer
                if transfer.awaitsHead, transfer.headDeadline != nil { awaitingHead[ObjectIdentifier(transfer)] = transfer }
                pfc_multi_add_handle(multi, easy)
            } catch {
                transfer.fail(error)
            }
        case .cancel(let transfer):
            guard let easy = transfer.easy, transfers[easy] != nil else { return }  // ended, or never started
            remove(transfer)
            transfer.fail(CancellationError())
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
            }
        }
    }

    /// How long the thread may sleep: until libcurl's next timer or the next head deadline, at most a minute.
    private func pollTimeout(now: UInt64) -> Int32 {
        var curlTimeout = -1
        pfc_multi_timeout(multi, &curlTimeout)
        var milliseconds = curlTimeout >= 0 ? curlTimeout : 60_000
        for transfer in awaitingHead.values {
            guard let deadline = transfer.headDeadline else { continue }
            let left = deadline > now ? Int((deadline - now) / 1_000_000) + 1 : 0
            milliseconds = min(milliseconds, left)
        }
        return Int32(min(milliseconds, 60_000))
    }
}
#endif
