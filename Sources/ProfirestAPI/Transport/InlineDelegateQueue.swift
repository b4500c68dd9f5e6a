import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking

/// The delegate queue of the whole-body sessions on Linux: runs what the session hands it at once, on the session's
/// own work queue, instead of as an operation on another thread.
///
/// FoundationNetworking delivers a task's completion handler through the session's `delegateQueue`. With an
/// ordinary `OperationQueue` every request pays for an operation and a thread hop there before its continuation
/// is resumed — with 64 requests in flight about a tenth more client CPU than `URLSession.data(for:)`, which runs
/// its completion inline (measured: BENCHMARKS.md, "The concurrency gap"). This queue gives the completion handler
/// the same inline path. What runs on it must therefore never wait for the session's work queue:
/// `URLSessionTransport` resumes its continuation and nothing more there, cancels tasks off that queue from its
/// cancellation handler, and `SendSessionDelegate` answers redirects and challenges from another thread.
final class InlineDelegateQueue: OperationQueue, @unchecked Sendable {
    // @unchecked: no stored state of its own.
    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        block()
    }
}
#endif
