#if os(Linux) && !PROFIREST_NO_CURL
import Foundation

/// The body of a streamed response between the transfer, which offers what libcurl receives, and the reader, which
/// pulls it: at most `limit` bytes (plus one chunk) wait here, and past that the transfer is paused until the reader
/// has caught up, so a server that floods the event stream cannot grow the process's memory.
///
/// The reader's side is an `AsyncThrowingStream` that pulls (`unfolding`), so every read is seen here: that is what
/// lets the transfer resume, and a read by a cancelled task cancels the transfer (as `close()` expects).
final class CurlStreamBody: @unchecked Sendable {
    // @unchecked: every stored property below is touched only while `lock` is held.
    private let lock = NSLock()
    private var chunks: [Data] = []
    private var head = 0
    private var buffered = 0
    private var ending: Result<Void, Error>?
    private var reader: CheckedContinuation<Data?, Error>?
    private var paused = false
    private let limit: Int
    private let resumeTransfer: @Sendable () -> Void
    private let cancelTransfer: @Sendable () -> Void

    init(limit: Int, resume: @escaping @Sendable () -> Void, cancel: @escaping @Sendable () -> Void) {
        self.limit = limit
        self.resumeTransfer = resume
        self.cancelTransfer = cancel
    }

    /// The body as a sequence, keeping `owners` (the transport, and what the transfer's callbacks reach it through)
    /// alive as long as it is. When the sequence and its iterators are gone unread to the end, the transfer is cancelled
    /// (`Abandonment`), so a dropped stream does not hold its connection paused for ever.
    func sequence(keeping owners: [AnyObject & Sendable]) -> AsyncThrowingStream<Data, Error> {
        let abandonment = Abandonment(cancelTransfer)
        return AsyncThrowingStream(unfolding: { [self] in
            withExtendedLifetime((abandonment, owners)) {}
            return try await self.next()
        })
    }

    /// Takes `data` from the transfer (on the transfer's thread). False means "full": the transfer must pause and
    /// offer the same bytes again once resumed.
    func offer(_ data: Data) -> Bool {
        lock.lock()
        if ending != nil {
            lock.unlock()
            return true  // the reader is gone; dropping what still comes is right
        }
        if let waiting = reader {
            reader = nil
            lock.unlock()
            waiting.resume(returning: data)
            return true
        }
        if buffered >= limit {
            paused = true
            lock.unlock()
            return false
        }
        chunks.append(data)
        buffered += data.count
        lock.unlock()
        return true
    }

    /// Ends the body: `nil` for a complete response, an error for one that broke off.
    func finish(throwing error: Error?) {
        lock.lock()
        if ending == nil { ending = error.map { .failure($0) } ?? .success(()) }
        let waiting = reader
        reader = nil
        let failure = error
        lock.unlock()
        if let waiting {
            if let failure { waiting.resume(throwing: failure) } else { waiting.resume(returning: nil) }
        }
    }

    private func next() async throws -> Data? {
        if Task.isCancelled { return try abandon() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, Error>) in
                lock.lock()
                if head < chunks.count {
                    let chunk = chunks[head]
                    // The taken chunk's slot lets go of its bytes: a reader that never quite catches up (a flood)
                    // would otherwise keep every chunk of the stream alive here.
                    chunks[head] = Data()
                    head += 1
                    buffered -= chunk.count
                    if head == chunks.count {
                        chunks.removeAll(keepingCapacity: true)
                        head = 0
                    } else if head >= 1024 {
                        chunks.removeFirst(head)
                        head = 0
                    }
                    // Resumed once the reader has taken half of what filled the buffer: fewer pause/resume rounds.
                    let resume = paused && buffered <= limit / 2
                    if resume { paused = false }
                    lock.unlock()
                    if resume { resumeTransfer() }
                    continuation.resume(returning: chunk)
                    return
                }
                if let ending {
                    lock.unlock()
                    switch ending {
                    case .success: continuation.resume(returning: nil)
                    case .failure(let error): continuation.resume(throwing: error)
                    }
                    return
                }
                reader = continuation
                let resume = paused
                paused = false
                lock.unlock()
                if resume { resumeTransfer() }
            }
        } onCancel: {
            self.cancelByReader()
        }
    }

    private func abandon() throws -> Data? {
        cancelByReader()
        throw CancellationError()
    }

    private func cancelByReader() {
        lock.lock()
        let alreadyEnded = ending != nil
        if !alreadyEnded { ending = .failure(CancellationError()) }
        let waiting = reader
        reader = nil
        lock.unlock()
        waiting?.resume(throwing: CancellationError())
        if !alreadyEnded { cancelTransfer() }
    }

    /// Cancels the transfer when the body's sequence is released before it ended.
    private final class Abandonment: Sendable {
        let cancel: @Sendable () -> Void
        init(_ cancel: @escaping @Sendable () -> Void) { self.cancel = cancel }
        deinit { cancel() }
    }
}
#endif
