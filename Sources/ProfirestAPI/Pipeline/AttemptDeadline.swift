import Foundation

/// Bounds one attempt, body included. `URLRequest.timeoutInterval` is only an idle timeout, and a Linux
/// URLSession task on a connection the server closed can spin until it fires; racing the transport against a
/// timer ends the attempt on time whatever the transport does (the transport is then cancelled).
///
/// A transport that bounds the whole exchange by `HTTPRequest.timeout` itself (`BoundsEachAttempt`, i.e.
/// `URLSessionTransport`, with a dispatch timer) is called directly: the race costs two child tasks and a sleeping
/// timer per attempt, measurable at 64 requests in flight.
enum AttemptDeadline {
    struct Expired: Error {}

    static func run<Answer: Sendable>(
        timeout: TimeInterval, timer: @escaping @Sendable (TimeInterval) async throws -> Void,
        _ operation: @escaping @Sendable () async throws -> Answer
    ) async throws -> Answer {
        try await withThrowingTaskGroup(of: Answer?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await timer(timeout)
                return nil
            }
            defer { group.cancelAll() }
            // The first child to finish decides; the other is cancelled when the group is left.
            guard let first = try await group.next(), let answer = first else { throw Expired() }
            return answer
        }
    }
}

