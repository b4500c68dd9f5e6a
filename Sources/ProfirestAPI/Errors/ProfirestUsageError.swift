import Foundation

/// The library was used in a way it cannot serve (an absolute URL of another host where a path belongs, a token
/// over plain http…). Nothing was sent; the message says how to fix the call.
///
/// ```swift
/// catch let e as ProfirestUsageError { assertionFailure(e.message) }
/// ```
public struct ProfirestUsageError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// What is wrong and how to fix it. Usage: `print(e.message)`
    public var message: String

    /// Usage: `throw ProfirestUsageError("Pass a path such as /restaurants/11, not a URL.")`
    public init(_ message: String) { self.message = message }

    /// Usage: `print(e)`
    public var description: String { "ProfirestUsageError: \(message)" }
    /// Usage: `e.localizedDescription`
    public var errorDescription: String? { message }
}
