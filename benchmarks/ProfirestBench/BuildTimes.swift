// Clean release builds, one after another, each in a scratch directory of its own that is deleted before and after:
//
//   library_clean_build_seconds   `swift build -c release --target ProfirestAPI`
//   example_clean_build_seconds   `swift build -c release --product Pichacka` (the example app, the library included)
//
// Wall-clock times on this machine (bench_machine says which, and its load): unlike the other figures these are not
// ratios, so they move with the machine and with whatever else runs on it.
import Foundation

func buildTimeResults() throws -> [String: Any] {
    let scratch = FileManager.default.currentDirectoryPath + "/.build/bench-clean-build"
    func clean() { try? FileManager.default.removeItem(atPath: scratch) }
    func build(_ arguments: [String]) throws -> Double {
        clean()
        defer { clean() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "build", "-c", "release", "--scratch-path", scratch] + arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        let start = DispatchTime.now().uptimeNanoseconds
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard process.terminationStatus == 0 else {
            throw BenchFailure("swift build \(arguments.joined(separator: " ")) failed: \(String(decoding: message, as: UTF8.self))")
        }
        FileHandle.standardError.write(Data(String(format: "build: %@ %.1f s\n", arguments.joined(separator: " "), seconds).utf8))
        return seconds
    }
    let library = try build(["--target", "ProfirestAPI"])
    let example = try build(["--product", "Pichacka"])
    return [
        "library_clean_build_seconds": rounded(library),
        "example_clean_build_seconds": rounded(example),
        "build_bench_setup": "clean `swift build -c release` in an empty scratch directory, --target ProfirestAPI, then "
            + "--product Pichacka (the example, library included), one after the other; wall time on bench_machine",
    ]
}

/// The machine the figures came from: CPU, cores, memory, the Swift version, and the load average.
func machineDescription() -> [String: Any] {
    var machine: [String: Any] = ["cores": ProcessInfo.processInfo.activeProcessorCount]
    if let line = procFile("/proc/cpuinfo").split(separator: "\n").first(where: { $0.hasPrefix("model name") })
    {
        machine["cpu"] = line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) }
    }
    machine["memory_gb"] = rounded(Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824)
    machine["os"] = ProcessInfo.processInfo.operatingSystemVersionString
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["swift", "--version"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    if (try? process.run()) != nil {
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        machine["swift"] = text.split(separator: "\n").first.map(String.init)
    }
    return machine
}

/// The 1, 5 and 15 minute load averages.
func loadAverage() -> [Double] {
    procFile("/proc/loadavg").split(separator: " ").prefix(3).compactMap { Double($0) }
}
