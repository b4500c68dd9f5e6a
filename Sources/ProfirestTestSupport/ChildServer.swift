import Foundation

/// A local server in a child process — the sandbox or `tools/loopback_server.py` — for the integration tests and the
/// benchmarks. Not part of the library.
///
/// The server announces itself with one JSON object on the first line of its stdout (`{"port": 8123}`,
/// `{"sandbox": "ready", "api": …}`) and exits when its stdin closes. So the parent keeps stdin open for the
/// server's whole life: if the parent dies, even by SIGKILL, the server sees end of input and no server is left
/// behind. Stdout keeps being drained so the server never blocks on a full pipe, and `stop()` is bounded.
///
/// ```swift
/// let server = try ChildServer(executable: "/usr/bin/env", arguments: ["python3", "tools/loopback_server.py"])
/// ```
public final class ChildServer: @unchecked Sendable {
    // @unchecked: every stored property is set in init and never changes (the announcement is only read); Process
    // and Pipe are thread-safe for the calls made here (terminate, isRunning, closing a handle).
    public let process = Process()
    private let stdin = Pipe()
    private let stdout = Pipe()
    /// The server's first line, a JSON object. Usage: `server.announcement["port"] as? Int`
    public let announcement: [String: Any]
    /// Lines the server printed after its first, until `command` takes them.
    private let lines = LineQueue()

    /// Starts `executable` with `arguments` (in `directory`, if given) and waits for its first line.
    /// Throws `ChildServerFailure` when it cannot start or its first line is not a JSON object.
    public init(executable: String, arguments: [String], directory: URL? = nil) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw ChildServerFailure("\(executable) could not be started: \(error)")
        }
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let first = Data(line.prefix { $0 != UInt8(ascii: "\n") })
        guard let object = (try? JSONSerialization.jsonObject(with: first)) as? [String: Any] else {
            process.terminate()
            throw ChildServerFailure("\(arguments.joined(separator: " ")) did not start: \(String(decoding: first, as: UTF8.self))")
        }
        announcement = object
        let rest = Data(line.drop { $0 != UInt8(ascii: "\n") }.dropFirst())
        let lines = self.lines
        lines.append(rest)
        stdout.fileHandleForReading.readabilityHandler = { handle in lines.append(handle.availableData) }
    }

    /// Writes `line` to the server's stdin and returns its answer, the next JSON object it prints (nil after
    /// `timeout` seconds), for servers that take commands (`tools/net_harness.py`: `freeze`, `thaw`).
    public func command(_ line: String, timeout: TimeInterval = 20) -> [String: Any]? {
        stdin.fileHandleForWriting.write(Data((line + "\n").utf8))
        guard let answer = lines.next(timeout: timeout) else { return nil }
        return (try? JSONSerialization.jsonObject(with: answer)) as? [String: Any]
    }

    /// Closes its stdin and terminates it; a server that ignores SIGTERM is killed after 3 s (`ProcessControl.kill`).
    public func stop() {
        stdout.fileHandleForReading.readabilityHandler = nil
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        let deadline = Date().addingTimeInterval(3)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { ProcessControl.kill(process) }
    }
}

/// Complete lines from a child's stdout, in order.
private final class LineQueue: @unchecked Sendable {
    // @unchecked: `pending` and `complete` are touched only while `condition` is locked.
    private let condition = NSCondition()
    private var pending = Data()
    private var complete: [Data] = []

    func append(_ data: Data) {
        condition.lock()
        pending.append(data)
        while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
            complete.append(Data(pending[pending.startIndex..<end]))
            pending = Data(pending[pending.index(after: end)...])
        }
        condition.broadcast()
        condition.unlock()
    }

    func next(timeout: TimeInterval) -> Data? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while complete.isEmpty {
            if !condition.wait(until: deadline) { return nil }
        }
        return complete.removeFirst()
    }
}

/// A child server that could not be started. Usage: `catch let failure as ChildServerFailure { print(failure) }`
public struct ChildServerFailure: Error, CustomStringConvertible {
    /// What went wrong. Usage: `failure.description`
    public let description: String
    init(_ description: String) { self.description = description }
}

/// The sandbox's command line for a test or a benchmark: an ephemeral loopback port, an in-memory database, no
/// output but the ready line, and an exit when stdin closes. `validate` checks every request and response against
/// the contract (7–15 ms a request, so benchmarks leave it off).
/// Usage: `ChildServer(executable: python, arguments: sandboxArguments(validate: true))`
public func sandboxArguments(validate: Bool) -> [String] {
    ["-m", "sandbox", "serve", "--port", "0", "--db", ":memory:"] + (validate ? ["--validate"] : [])
        + ["--quiet", "--exit-on-stdin-eof"]
}
