import Foundation
import ProfirestAPI

/// The package's root directory (where Package.swift is): this file is Tests/ProfirestAPITests/TestSupport/TestHelpers.swift.
let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

extension Data {
    var hex: String { map { String(format: "%02x", $0) }.joined() }

    init(hex: String) {
        var bytes = [UInt8]()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self.init(bytes)
    }
}

/// A fresh directory under the system temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "profirest-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Collects failures from background threads so the test thread can assert on them.
final class ErrorBox: @unchecked Sendable {
    // @unchecked: `errors` is only touched while `lock` is held.
    private let lock = NSLock()
    private var errors: [String] = []

    func record(_ error: Error) {
        lock.lock()
        errors.append(String(describing: error))
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return errors
    }
}

/// Runs `body` on `threads` real threads at once (not the cooperative pool, which blocking locks would
/// starve) and waits for all of them, failing instead of hanging if they do not finish in time.
func runOnThreads(_ threads: Int, timeout: TimeInterval = 60, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let group = DispatchGroup()
    for index in 0..<threads {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    return group.wait(timeout: .now() + timeout) == .success
}

/// Adds one to the number stored under "counter" `rounds` times on each of `threads` threads, each read and write
/// inside `withLock`, with the storage `storage(thread)` picks; a lost update shows as a lower final count.
/// Returns whether every thread finished in time, and the errors they met.
func incrementUnderLock(
    threads: Int, rounds: Int, storage: @escaping @Sendable (Int) -> any LockingTokenStorage
) -> (finished: Bool, errors: [String]) {
    let errors = ErrorBox()
    let finished = runOnThreads(threads) { index in
        let storage = storage(index)
        for _ in 0..<rounds {
            do {
                try storage.withLock("counter") {
                    let n = Int(try storage.get("counter") ?? "0")!
                    try storage.set("counter", String(n + 1))
                }
            } catch { errors.record(error) }
        }
    }
    return (finished, errors.all)
}
