import Foundation

/// Case-insensitive header lookup shared by requests, responses and `APIResponse`.
enum HTTPHeaders {
    static func value(_ name: String, in headers: [String: String]) -> String? {
        // The exact spelling first: it is what the library itself writes, and it avoids a scan.
        if let exact = headers[name] { return exact }
        for (key, value) in headers where key.caseInsensitiveCompare(name) == .orderedSame { return value }
        return nil
    }
}
