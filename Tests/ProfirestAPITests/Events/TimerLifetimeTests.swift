import Foundation
import XCTest

/// No timer outlives what it timed: a watcher's stream start deadline, idle watch and waits end with it. Measured in a
/// process of its own (`ProfirestRefreshProbe timers`, built next to the tests; the library's real sleep and clock,
/// an in-memory feed), after a warm-up: 10,000 watchers, each cancelled once its first event came, then one watcher
/// through 5,000 reconnections (each in a process of its own). A cancelled `Task.sleep` keeps its memory until its
/// deadline (10 s, 32 s), which made +16 MB and +4 MB; resident memory here may grow by at most 2 MB in each, and no
/// descriptor or thread may be left behind.
final class TimerLifetimeTests: XCTestCase {
    func testWatchersAndReconnectionsLeaveNoTimerBehind() throws {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [here, Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL]
            .map { $0.appendingPathComponent("ProfirestRefreshProbe").path }
        guard let probe = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            return XCTFail("ProfirestRefreshProbe is not built next to the tests (swift build builds it)")
        }
        let (watchers, reconnects) = (10_000, 5_000)
        // Each in a process of its own, so that neither reuses memory the other freed; the warm-ups bring the memory
        // of the runtime and malloc to where more of the same adds nothing (measured: about 0.5 MB after 3,000
        // watchers, none after 1,000 watchers and 500 reconnections).
        let (watcherWarmup, reconnectWarmup) = (3_000, 1_000)
        let first = try report(
            probe, ["--watchers", String(watchers), "--reconnects", "0", "--warmup", String(watcherWarmup)])
        let second = try report(
            probe, ["--watchers", "0", "--reconnects", String(reconnects), "--warmup", String(reconnectWarmup)])
        let watcherGrowth = first.number("watchers_rss_after_kb") - first.number("watchers_rss_before_kb")
        let reconnectGrowth = second.number("reconnects_rss_after_kb") - second.number("watchers_rss_after_kb")
        XCTAssertLessThanOrEqual(watcherGrowth, 2048, "KB kept after \(watchers) watchers: \(first.line)")
        XCTAssertLessThanOrEqual(reconnectGrowth, 2048, "KB kept after \(reconnects) reconnections: \(second.line)")
        let opened = [(first, watcherWarmup * 3 / 2 + watchers), (second, reconnectWarmup * 3 / 2 + reconnects)]
        for (run, expected) in opened {
            XCTAssertGreaterThan(run.number("watchers_rss_before_kb"), 0, run.line)
            // Every stream was opened (each watcher's one, each reconnection's) and none is left open.
            XCTAssertGreaterThanOrEqual(run.number("streams_opened"), expected, run.line)
            XCTAssertEqual(run.number("streams_open"), 0, run.line)
            XCTAssertGreaterThan(run.number("descriptors_before"), 0, run.line)
            XCTAssertLessThanOrEqual(run.number("descriptors_after"), run.number("descriptors_before"), run.line)
            XCTAssertGreaterThan(run.number("threads_before"), 0, run.line)
            XCTAssertLessThanOrEqual(run.number("threads_after"), run.number("threads_before"), run.line)
        }
    }

    private struct Report {
        let line: String
        let values: [String: Any]
        func number(_ key: String) -> Int { values[key] as? Int ?? -1 }
    }

    private func report(_ probe: String, _ arguments: [String]) throws -> Report {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: probe)
        process.arguments = ["timers"] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let line = String(decoding: data, as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, line)
        let values = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        XCTAssertNotNil(values, "the probe printed no report: \(line)")
        return Report(line: line, values: values ?? [:])
    }
}
