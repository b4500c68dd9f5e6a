import Foundation
@testable import ProfirestAPI

/// The transports the library ships, for tests that hold each of them to the same promises.
enum TransportKind: String, CaseIterable, CustomStringConvertible {
    /// libcurl driven directly: the default on Linux.
    case curl
    /// URLSession (FoundationNetworking on Linux): the default on Apple platforms.
    case urlSession

    var description: String { rawValue }

    /// A new transport of this kind (URLSession with the platform's connection reuse).
    func make() -> any StreamingHTTPTransport {
        switch self {
        case .curl:
            #if os(Linux)
            do { return try CurlTransport() } catch { fatalError("libcurl is part of this machine's toolchain: \(error)") }
            #else
            return URLSessionTransport()
            #endif
        case .urlSession:
            return URLSessionTransport()
        }
    }

    /// The kinds that exist on this platform (curl only on Linux).
    static var available: [TransportKind] {
        #if os(Linux)
        return allCases
        #else
        return [.urlSession]
        #endif
    }
}
