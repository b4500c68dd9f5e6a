import Foundation

/// What a transport throws when an answer's body is longer than ``HTTPRequest/maxResponseBytes``: the library reports
/// it as `response_too_large`, so one oversized answer cannot take the device's memory.
///
/// ```swift
/// if received > limit { throw ResponseTooLarge(limit: limit) }
/// ```
public struct ResponseTooLarge: Error, Sendable, Hashable {
    /// The limit the answer went past, in bytes.
    public var limit: Int

    /// Makes the error, for a transport of your own.
    ///
    /// - Parameter limit: the limit the answer went past, in bytes.
    ///
    /// ```swift
    /// ResponseTooLarge(limit: request.maxResponseBytes ?? 0)
    /// ```
    public init(limit: Int) { self.limit = limit }
}
