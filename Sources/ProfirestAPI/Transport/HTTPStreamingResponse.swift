import Foundation

/// A streamed response: its status and headers at once, and its body as it arrives, for the event feed's live
/// stream.
///
/// ```swift
/// for try await chunk in streaming.body { buffer.append(chunk) }
/// ```
public struct HTTPStreamingResponse: Sendable {
    /// The HTTP status of the answer, which tells a stream (200) from a refusal.
    public var status: Int
    /// The headers as received, among them the `Content-Type` that tells an event stream from an error page.
    public var headers: [String: String]
    /// The body in the pieces the server flushed; it ends when the response ends and throws when it breaks off.
    public var body: AsyncThrowingStream<Data, Error>

    /// Makes a streamed response, for a transport of your own or a test double of the live stream.
    ///
    /// - Parameters:
    ///   - status: the HTTP status of the answer.
    ///   - headers: the headers as received.
    ///   - body: the body's pieces as they arrive; it ends with the response and throws when it breaks off.
    ///
    /// ```swift
    /// HTTPStreamingResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: chunks)
    /// ```
    public init(status: Int, headers: [String: String], body: AsyncThrowingStream<Data, Error>) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

extension AsyncThrowingStream where Element == Data, Failure == Error {
    /// Ends the connection behind a body its reader is done with, however the reading ended. Dropping the iterator
    /// does not: the transport still holds the stream's continuation (`URLSessionTransport` until the request
    /// ends), so the request would run on and its chunks pile up unread. A read by a cancelled task is what ends
    /// an `AsyncThrowingStream` from the reading side: it runs `onTermination`, which cancels the request. Call it
    /// only when no other read of the body is under way.
    func close() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var iterator = self.makeAsyncIterator()
                // Until the end: a read that started before the cancellation may still be handed a buffered chunk.
                while (try? await iterator.next()) != nil {}
            }
            group.cancelAll()
        }
    }
}
