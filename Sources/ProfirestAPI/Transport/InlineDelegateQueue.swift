import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking

/// The delegate queue of the whole-body sessions on Linux: runs what the session hands it at once, on the session's
/// own work queue, instead of as an operation on another thread.
///
/// FoundationNetworking delivers a task's delegate calls (and a completion handler) through the session's
/// `delegateQueue`. With an ordinary `OperationQueue` every request pays for an operation and a thread hop there
/// before its continuation is resumed — with 64 requests in flight about a tenth more client CPU than
/// `URLSession.data(for:)`, which runs its completion inline (measured with the completion-handler tasks the
/// transport used then: BENCHMARKS.md, "The concurrency gap"). This queue gives those calls the same inline path.
/// What runs on it must therefore never wait for the session's work queue: `SendSessionDelegate` collects the bytes
/// and resumes the continuation there, and answers redirects and challenges and cancels a task over the size cap from
/// another thread; `URLSessionTransport` cancels tasks off that queue from its cancellation handler.
final class InlineDelegateQueue: OperationQueue, @unchecked Sendable {
    // @unchecked: no stored state of its own.
    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        block()
    }
}
#endif
