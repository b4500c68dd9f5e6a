// What quiet event streams cost while nothing happens — a kitchen display or a terminal follows the feed all day, and
// most of the day the feed is silent:
//
//   sse_idle_cpu_percent_1, _100        a fresh process of the bench holding 1, then 100 streams of
//                                       tools/loopback_server.py's /v2/quiet-stream (the head and one comment, then
//                                       silence) through the library's default transport (`CurlTransport().stream`,
//                                       each body read by a task, as the event watcher reads it), for --idle-seconds
//                                       (60) each: the CPU time of the whole process (utime + stime of
//                                       /proc/self/stat) ÷ the wall time × 100 (100 = one core busy)
//   sse_idle_cpu_percent                the larger of the two (target <= 1)
//   sse_idle_cpu_percent_raw_urlsession raw URLSession (a data task and its URLSessionDataDelegate, the way to stream
//                                       on Linux) on one quiet stream for --idle-raw-seconds (15), measured the same
//                                       way in a process of its own: the FoundationNetworking spin (TOOLCHAIN-NOTES)
//
// Each measurement starts once every stream has delivered its comment and the process has had a second to settle,
// and checks that no stream ended during it. `sse_idle_detail` adds the split into user and system time, the
// process's threads and its context switches per second (getrusage: how often its threads went to sleep or were
// preempted — an idle process should barely have any).
import Foundation
import ProfirestAPI
import ProfirestTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// This process's CPU time so far, seconds, split into user and system time as /proc/self/stat's utime and stime
/// split it (the total from `ProcessControl`; where there is no /proc, all of it counts as user time).
func processCPUSeconds() -> (user: Double, system: Double) {
    let total = ProcessControl.cpuMicroseconds() / 1e6
    let stat = procFile("/proc/self/stat")
    // After the command name in parentheses: utime and stime are the 12th and 13th fields, in clock ticks.
    guard let close = stat.lastIndex(of: ")") else { return (total, 0) }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]), user + system > 0 else {
        return (total, 0)
    }
    return (total * user / (user + system), total * system / (user + system))
}

/// Context switches of this process's living threads so far, voluntary and not (each thread's
/// /proc/self/task/<tid>/status, Linux; NaN elsewhere), and how many threads it has now.
func processSwitchesAndThreads() -> (switches: Double, threads: Int) {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    var switches = 0.0
    var found = false
    for task in tasks {
        let status = (try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.contains("ctxt_switches:") {
            if let value = line.split(separator: ":").last.flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }) {
                switches += value
                found = true
            }
        }
    }
    return (found ? switches : .nan, tasks.count)
}

/// The process's CPU percentage (of one core) over `seconds` of doing nothing but holding what it holds, with the
/// user/system split, its threads and context switches per second.
func idleCPU(seconds: Double) async throws -> [String: Double] {
    let cpu0 = processCPUSeconds()
    let (switches0, _) = processSwitchesAndThreads()
    let t0 = DispatchTime.now().uptimeNanoseconds
    try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
    let cpu1 = processCPUSeconds()
    let (switches1, threads) = processSwitchesAndThreads()
    let wall = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
    let user = cpu1.user - cpu0.user
    let system = cpu1.system - cpu0.system
    return [
        "cpu_percent": rounded((user + system) / wall * 100), "user_seconds": rounded(user),
        "system_seconds": rounded(system), "wall_seconds": rounded(wall), "threads": Double(threads),
        "context_switches_per_second": rounded((switches1 - switches0) / wall),
    ]
}

/// What the readers of the quiet streams have seen.
final class QuietReaders: @unchecked Sendable {
    // @unchecked: every field is touched only under `lock`.
    private let lock = NSLock()
    private var greeted = 0
    private var ended: [String] = []

    func greet() { lock.lock(); greeted += 1; lock.unlock() }
    func end(_ why: String) { lock.lock(); ended.append(why); lock.unlock() }
    var state: (greeted: Int, ended: [String]) { lock.lock(); defer { lock.unlock() }; return (greeted, ended) }
}

/// The child process of `idleStreamResults`: 1 and then 100 quiet streams through the default transport; prints the
/// two measurements as one JSON line.
func idleStreamsChild(base: String, _ arguments: [String]) async throws {
    let seconds = arguments.firstIndex(of: "--idle-seconds").flatMap { Double(arguments[$0 + 1]) } ?? 60
    #if os(Linux)
    // The class of the default transport, made the way the shared one is (no extra certificates).
    let transport = try CurlTransport()
    #else
    let transport = URLSessionTransport()
    #endif
    let readers = QuietReaders()
    var tasks: [Task<Void, Never>] = []
    var results: [String: Any] = [:]
    for count in [1, 100] {
        while tasks.count < count {
            let request = HTTPRequest(
                method: "GET", url: URL(string: base + "/v2/quiet-stream")!, headers: ["Accept": "text/event-stream"])
            let response = try await transport.stream(request)
            guard response.status == 200 else { throw BenchFailure("quiet-stream: status \(response.status)") }
            tasks.append(Task {
                var greeted = false
                do {
                    for try await chunk in response.body where !greeted && !chunk.isEmpty {
                        greeted = true
                        readers.greet()
                    }
                    readers.end("ended")
                } catch {
                    readers.end("\(error)")
                }
            })
        }
        let deadline = Date().addingTimeInterval(30)
        while readers.state.greeted < count && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        guard readers.state.greeted == count else { throw BenchFailure("only \(readers.state.greeted) of \(count) quiet streams opened") }
        try await Task.sleep(nanoseconds: 1_000_000_000)  // let the process settle
        let measured = try await idleCPU(seconds: seconds)
        guard readers.state.ended.isEmpty else { throw BenchFailure("quiet streams ended while idle: \(readers.state.ended)") }
        FileHandle.standardError.write(Data(String(
            format: "idle: %3d quiet streams through the default transport for %.0f s: %.3f %% CPU (user %.2f s, system %.2f s), "
                + "%.1f context switches/s, %.0f threads\n", count, seconds, measured["cpu_percent"]!, measured["user_seconds"]!,
            measured["system_seconds"]!, measured["context_switches_per_second"]!, measured["threads"]!).utf8))
        results["\(count)"] = measured
    }
    for task in tasks { task.cancel() }
    try printJSONLine(results)
}

/// Streams one quiet response through raw URLSession, as an app without the library would on Linux.
final class QuietStreamDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: the counters are touched only under `lock`.
    private let lock = NSLock()
    private var bytes = 0
    private var finished: String?

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock(); bytes += data.count; lock.unlock()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        lock.lock(); finished = error.map { "\($0)" } ?? "ended"; lock.unlock()
    }

    var state: (bytes: Int, finished: String?) { lock.lock(); defer { lock.unlock() }; return (bytes, finished) }
}

/// The child process of `idleStreamResults` for raw URLSession: one quiet stream; prints the measurement as one JSON
/// line.
func idleRawURLSessionChild(base: String, _ arguments: [String]) async throws {
    let seconds = arguments.firstIndex(of: "--idle-raw-seconds").flatMap { Double(arguments[$0 + 1]) } ?? 15
    let delegate = QuietStreamDelegate()
    let session = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
    var request = URLRequest(url: URL(string: base + "/v2/quiet-stream")!)
    request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
    request.timeoutInterval = seconds + 60  // an idle timeout: it must not end the quiet stream during the measurement
    let task = session.dataTask(with: request)
    task.resume()
    let deadline = Date().addingTimeInterval(30)
    while delegate.state.bytes == 0 && delegate.state.finished == nil && Date() < deadline {
        try await Task.sleep(nanoseconds: 10_000_000)
    }
    guard delegate.state.bytes > 0 else { throw BenchFailure("raw URLSession: the quiet stream did not open (\(delegate.state))") }
    try await Task.sleep(nanoseconds: 1_000_000_000)
    let measured = try await idleCPU(seconds: seconds)
    guard delegate.state.finished == nil else { throw BenchFailure("raw URLSession: the quiet stream ended: \(delegate.state)") }
    task.cancel()
    session.invalidateAndCancel()
    FileHandle.standardError.write(Data(String(
        format: "idle:   1 quiet stream through raw URLSession for %.0f s: %.1f %% CPU (user %.2f s, system %.2f s), "
            + "%.0f context switches/s\n", seconds, measured["cpu_percent"]!, measured["user_seconds"]!,
        measured["system_seconds"]!, measured["context_switches_per_second"]!).utf8))
    try printJSONLine(["1": measured])
}

func idleStreamResults(_ arguments: [String]) async throws -> [String: Any] {
    let seconds = arguments.firstIndex(of: "--idle-seconds").flatMap { Double(arguments[$0 + 1]) } ?? 60
    let rawSeconds = arguments.firstIndex(of: "--idle-raw-seconds").flatMap { Double(arguments[$0 + 1]) } ?? 15
    let server = try Server(script: "tools/loopback_server.py")
    defer { server.stop() }
    let base = "http://127.0.0.1:\(server.port)"
    let library = try runChild(["--child", "sse-idle", "--base", base, "--idle-seconds", "\(seconds)"])
    let raw = try runChild(["--child", "sse-idle-raw", "--base", base, "--idle-raw-seconds", "\(rawSeconds)"])
    func percent(_ object: [String: Any], _ count: String) -> Double {
        (object[count] as? [String: Any])?["cpu_percent"] as? Double ?? .nan
    }
    let one = percent(library, "1")
    let hundred = percent(library, "100")
    return [
        "sse_idle_cpu_percent": max(one, hundred),
        "sse_idle_cpu_percent_1": one,
        "sse_idle_cpu_percent_100": hundred,
        "sse_idle_cpu_percent_raw_urlsession": percent(raw, "1"),
        "sse_idle_detail": ["default_transport": library, "raw_urlsession": raw],
        "sse_idle_bench_setup": "tools/loopback_server.py /v2/quiet-stream (head + one comment, then silence) on "
            + "loopback; a fresh process of the bench holds 1, then 100 such streams through CurlTransport().stream (the "
            + "default transport's class, each body read by a task) for \(Int(seconds)) s each; raw URLSession (data task "
            + "+ URLSessionDataDelegate, default configuration) holds 1 for \(Int(rawSeconds)) s in another; CPU = utime + "
            + "stime of /proc/self/stat over the wall time x 100, measured after every stream delivered its comment and 1 s "
            + "to settle",
    ]
}
