import Foundation

/// A call the library refused before sending anything because the call itself is wrong — an absolute URL where a
/// path belongs, a token over plain http… — with a message that says how to fix it.
///
/// It is a bug in the calling code, not a condition to handle at run time.
///
/// ```swift
/// catch let e as ProfirestUsageError { assertionFailure(e.message) }
/// ```
public struct ProfirestUsageError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// What is wrong with the call and how to fix it, for the developer who reads the log.
    public var message: String

    /// Makes a usage error with its `message`, for code that wraps the library and refuses calls the same way.
    ///
    /// - Parameter message: what is wrong with the call and how to fix it.
    ///
    /// ```swift
    /// throw ProfirestUsageError("Pass a path such as /restaurants/11, not a URL.")
    /// ```
    public init(_ message: String) { self.message = message }

    /// The message, marked as a usage error: `ProfirestUsageError: <message>`.
    public var description: String { "ProfirestUsageError: \(message)" }
    /// The ``message``, so that `localizedDescription` shows it.
    public var errorDescription: String? { message }
}
