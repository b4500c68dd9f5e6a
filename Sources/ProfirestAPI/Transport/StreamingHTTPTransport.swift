import Foundation

/// A transport that can also hand out a response body piece by piece as it arrives, which the event feed's live
/// stream (Server-Sent Events) needs; without it the feed polls.
///
/// ```swift
/// let head = try await transport.stream(request); for try await chunk in head.body { parse(chunk) }
/// ```
public protocol StreamingHTTPTransport: HTTPTransport {
    /// Sends `request` and returns as soon as the status and headers are known, so that the reader can start on the
    /// body while it still arrives; `body` yields the chunks as the server flushes them.
    ///
    /// - Parameter request: the request, complete: absolute URL, final headers, body and the attempt's `timeout`.
    /// - Returns: the status and headers, with the body to read as it arrives.
    /// - Throws: `URLError` when no head came, as ``HTTPTransport/send(_:)`` does.
    func stream(_ request: HTTPRequest) async throws -> HTTPStreamingResponse
}
