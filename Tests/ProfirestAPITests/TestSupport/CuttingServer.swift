import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback HTTP/1.1 server that answers every request with the first `cut` bytes of `answer` and then closes the
/// connection: an answer cut off at any byte, over a real socket, for the transports' retry tests. It reads each
/// request whole (head and Content-Length body) first, so the cut is the answer's, not the request's.
final class CuttingServer: @unchecked Sendable {
    // @unchecked: `seen` and `listenerOpen` are behind `lock`; the rest is set once.
    let port: Int
    private let listener: Int32
    private let answer: Data
    private let cut: Int
    /// Keeps the connection open after the cut instead of closing it: only the client can end the exchange then.
    private let holdOpen: Bool
    private let lock = NSLock()
    private var seen: [String] = []
    /// Whether `listener` is still this server's descriptor. Only the accept loop closes it, when it ends: closed by
    /// `stop()` while the loop was about to call `accept`, its number could already be the next test's server's
    /// listener, and this server would take that one's connections and count them as its own.
    private var listenerOpen = true

    init(answer: Data, cut: Int, holdOpen: Bool = false) throws {
        self.holdOpen = holdOpen
        self.answer = answer
        self.cut = min(cut, answer.count)
        (listener, port) = try Self.loopbackSocket(listening: true)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// A TCP socket bound to a port of 127.0.0.1 the system chose, listening or not, and that port. Closed without
    /// listening, it leaves a port nothing answers on.
    static func loopbackSocket(listening: Bool) throws -> (socket: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && (!listening || listen(fd, 16) == 0)
                    && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// The request lines seen (`POST /v2/x HTTP/1.1`), one per request.
    var requests: [String] { lock.withLock { seen } }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Stops accepting: a blocked `accept` returns, and the accept loop then closes the listener.
    func stop() {
        lock.withLock {
            if listenerOpen { shutdown(listener, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptLoop() {
        defer {
            lock.withLock {
                close(listener)
                listenerOpen = false
            }
        }
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            let thread = Thread { [self] in serve(connection) }
            thread.start()
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        // The head.
        var headEnd: Int?
        while headEnd == nil {
            let n = Self.retryingInterrupts { read(connection, &buffer, buffer.count) }
            if n <= 0 { return }
            received += buffer[0..<n]
            headEnd = Self.find([13, 10, 13, 10], in: received)
        }
        let head = String(decoding: received[0..<headEnd!], as: UTF8.self)
        var length = 0
        for line in head.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" {
                length = Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        while received.count < headEnd! + 4 + length {
            let n = Self.retryingInterrupts { read(connection, &buffer, buffer.count) }
            if n <= 0 { return }
            received += buffer[0..<n]
        }
        let requestLine = head.split(separator: "\r\n").first.map(String.init) ?? ""
        lock.withLock { seen.append(requestLine) }
        answer.prefix(cut).withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Self.retryingInterrupts { write(connection, bytes.baseAddress! + offset, bytes.count - offset) }
                if n <= 0 { return }
                offset += n
            }
        }
        if !holdOpen { shutdown(connection, Int32(SHUT_WR)) }
        // Drain what the client may still send, so the close is a FIN, not a reset that could swallow the prefix.
        var tv = timeval(tv_sec: holdOpen ? 60 : 2, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        while Self.retryingInterrupts({ read(connection, &buffer, buffer.count) }) > 0 {}
    }

    /// A read or write again when a signal interrupted it (EINTR): the test process gets signals (its child servers'
    /// SIGCHLD, ThreadSanitizer's own), and a request given up on so would be a connection closed without an answer
    /// and without being counted — an attempt the server never saw.
    private static func retryingInterrupts(_ call: () -> Int) -> Int {
        while true {
            let n = call()
            if n >= 0 || errno != EINTR { return n }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where Array(haystack[start..<start + needle.count]) == needle {
            return start
        }
        return nil
    }
}
