import Foundation
import XCTest

/// No timer outlives what it timed: a watcher's stream start deadline, idle watch and waits end with it. Measured in a
/// process of its own (`ProfirestRefreshProbe timers`, built next to the tests; the library's real sleep and clock,
/// an in-memory feed), after a warm-up: 10,000 watchers, each cancelled once its first event came, then one watcher
/// through 5,000 reconnections. A cancelled `Task.sleep` keeps about 1.5 KB until its deadline (10 s, 32 s), which
/// made the first +15 MB; resident memory here may grow by at most 2 MB in each, and no descriptor or thread may be
/// left behind.
final class TimerLifetimeTests: XCTestCase {
    func testWatchersAndReconnectionsLeaveNoTimerBehind() throws {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [here, Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL]
            .map { $0.appendingPathComponent("ProfirestRefreshProbe").path }
        guard let probe = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            return XCTFail("ProfirestRefreshProbe is not built next to the tests (swift build builds it)")
        }
        let (watchers, reconnects, warmup) = (10_000, 5_000, 2_000)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: probe)
        process.arguments = [
            "timers", "--watchers", String(watchers), "--reconnects", String(reconnects), "--warmup", String(warmup),
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let line = String(decoding: data, as: UTF8.self)
        guard let report = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return XCTFail("the probe printed no report: \(line)")
        }
        func number(_ key: String) -> Int { report[key] as? Int ?? -1 }
        let watcherGrowth = number("watchers_rss_after_kb") - number("watchers_rss_before_kb")
        let reconnectGrowth = number("reconnects_rss_after_kb") - number("watchers_rss_after_kb")
        XCTAssertLessThanOrEqual(watcherGrowth, 2048, "KB kept after \(watchers) watchers: \(line)")
        XCTAssertLessThanOrEqual(reconnectGrowth, 2048, "KB kept after \(reconnects) reconnections: \(line)")
        XCTAssertGreaterThan(number("watchers_rss_before_kb"), 0, line)
        // Every stream was opened (each watcher's one, each reconnection's) and none is left open.
        XCTAssertGreaterThanOrEqual(number("streams_opened"), warmup + warmup / 2 + watchers + reconnects, line)
        XCTAssertEqual(number("streams_open"), 0, line)
        XCTAssertLessThanOrEqual(number("descriptors_after"), number("descriptors_before"), line)
        XCTAssertLessThanOrEqual(number("threads_after"), number("threads_before"), line)
        XCTAssertGreaterThan(number("descriptors_before"), 0, line)
        XCTAssertGreaterThan(number("threads_before"), 0, line)
    }
}
