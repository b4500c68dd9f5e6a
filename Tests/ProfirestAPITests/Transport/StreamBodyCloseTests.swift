import Foundation
import XCTest
@testable import ProfirestAPI

/// `close()` on a streamed body: how the library ends a connection it reads no further.
final class StreamBodyCloseTests: XCTestCase {
    /// As `URLSessionTransport` builds a body: closing must reach `onTermination`, which cancels the request,
    /// even with chunks still buffered and the reading task not cancelled.
    func testClosingRunsOnTerminationLikeACancelledRead() async {
        let (body, continuation) = AsyncThrowingStream<Data, Error>.makeStream()
        let terminations = Locked([String]())
        continuation.onTermination = { termination in
            terminations.withLock { $0.append("\(termination)") }
        }
        continuation.yield(Data("unread".utf8))
        var iterator = body.makeAsyncIterator()
        _ = try? await iterator.next()
        continuation.yield(Data("never read".utf8))
        await body.close()
        XCTAssertEqual(terminations.withLock { $0 }, ["cancelled"])
        XCTAssertEqual(continuation.yield(Data("late".utf8)).isTerminated, true, "the transport's yields go nowhere")
    }

    func testClosingABodyThatEndedDoesNothing() async {
        let (body, continuation) = AsyncThrowingStream<Data, Error>.makeStream()
        let terminations = Locked([String]())
        continuation.onTermination = { termination in terminations.withLock { $0.append("\(termination)") } }
        continuation.finish()
        await body.close()
        XCTAssertEqual(terminations.withLock { $0 }, ["finished(nil)"])
    }
}

private extension AsyncThrowingStream<Data, Error>.Continuation.YieldResult {
    var isTerminated: Bool { if case .terminated = self { true } else { false } }
}
