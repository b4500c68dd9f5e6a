import Foundation

/// Moves one HTTP request and its whole response, so that an app can put its own networking (a proxy, a test
/// double) under the library; retries, timeouts, tokens and errors stay in the library.
///
/// The library calls it once per attempt.
///
/// A transport must not follow redirects (return the 3xx as it is) and should stop when its task is cancelled.
/// Throw `URLError` for failures without an answer: `.timedOut` becomes the `timeout` code, anything else
/// `network_error`.
///
/// ```swift
/// let api = ProfirestApi(options: .init(transport: URLSessionTransport()))
/// ```
public protocol HTTPTransport: Sendable {
    /// Sends `request` as it is and returns the status, headers and complete body of the answer, whatever its status.
    ///
    /// Throw `URLError` when no answer came (`.timedOut` becomes the library's `timeout`, anything else
    /// `network_error`); return a 3xx or 4xx as it is.
    ///
    /// - Parameter request: the request, complete: absolute URL, final headers, body and the attempt's `timeout`.
    /// - Returns: the answer's status, headers and whole body, whatever the status (a 3xx or 4xx too).
    /// - Throws: `URLError` when no answer came; the library reports `.timedOut` as `timeout` and any other code as
    ///   `network_error`.
    func send(_ request: HTTPRequest) async throws -> APIResponse
}

/// A transport that ends each exchange by `HTTPRequest.timeout` itself, counting the whole exchange (not idle
/// time), and then throws `URLError(.timedOut)`: the library then calls it without racing a timer of its own.
protocol BoundsEachAttempt {}
