import Foundation
import XCTest
@testable import ProfirestAPI

/// A partner's backend serving 50 restaurants from one process against the sandbox: a connection each (consents
/// created in bulk), one storage with a key per connection, the default transport, a feed each fed by the sandbox's
/// event generator. Four feeds fail at once — a consent revoked (401 → refresh → invalid_grant → not_paired), an
/// outage of one restaurant's feed (503), an expired cursor (410), an expired access token (401 → refresh) — and the
/// other 46 must not notice. Every wait is for a condition with a generous limit; nothing is timed tightly, so the
/// test holds with both cores busy.
final class PartnerServingIntegrationTests: XCTestCase {
    private let count = 50

    func testARevokedConsentAndFailingFeedsLeaveTheOtherRestaurantsAlone() async throws {
        let sandbox = try SandboxServer.start()
        defer { sandbox.stop() }
        try await sandbox.config(["sse_retry_ms": 100, "heartbeat": 15])
        let consents = try await BulkConsents(sandbox, count: count, scope: "restaurants:read events:read")
        let (rows, restaurants, storage, key) = (consents.rows, consents.restaurants, consents.storage, consents.key)
        let grants = rows.map { $0["connection_id"]?.stringValue ?? "" }
        let record = PartnerRecord(count: count)
        let clients = (0..<count).map { index in
            sandbox.client(clientID: "moje-aplikace", storage: storage, storageKey: key(index),
                           onUnpaired: { _ in record.lost(index) })
        }
        let watchers = clients.enumerated().map { index, api in
            api.eventWatcher(.init(
                restaurantID: restaurants[index], onEvents: { record.received(index, $0.count) },
                onReset: { _ in record.reset(index) }, onError: { record.failed(index, $0) }, interval: 0.5))
        }
        let runs = watchers.enumerated().map { index, watcher in
            Task {
                await watcher.run()
                record.ended(index)
            }
        }
        defer {
            for watcher in watchers { watcher.stop() }
        }
        let streaming = await waitUntil(120) { watchers.allSatisfy(\.isStreaming) }
        XCTAssertTrue(streaming, "\(watchers.filter(\.isStreaming).count) of \(count) feeds streaming")
        try await sandbox.admin("POST", "events/generator", ["rate": 2, "client_id": "moje-aplikace"])
        let flowing = await waitUntil(120) { record.snapshot.received.allSatisfy { $0 >= 2 } }
        XCTAssertTrue(flowing, "every feed has events: \(record.snapshot.received)")

        // Four feeds fail at once, each cut so that it must reconnect into its failure.
        let (revoked, outage, expired, unauthorized) = (0, 1, 2, 3)
        let victims: Set<Int> = [revoked, outage, expired, unauthorized]
        let end: EventPage = try await clients[expired].get(
            "/events", options: .init(query: ["restaurant_id": .string(restaurants[expired])]))
        let gone = try JSONSerialization.data(withJSONObject: [
            "type": "https://api.mujprofirest.cz/problems/cursor_expired", "title": "Cursor expired", "status": 410,
            "code": "cursor_expired", "detail": "Injected by the test.", "next_cursor": end.nextCursor,
        ] as [String: Any])
        try await sandbox.fault([
            "path": "/v2/events*", "restaurant_id": restaurants[expired], "count": 1, "action": "status", "status": 410,
            "problem": false, "body": String(decoding: gone, as: UTF8.self), "content_type": "application/problem+json",
        ])
        try await sandbox.fault([
            "path": "/v2/events*", "restaurant_id": restaurants[outage], "count": NSNull(), "action": "status",
            "status": 503,
        ])
        try await sandbox.raw("POST", "/_sandbox/tokens/expire", json: ["device_id": grants[unauthorized]])
        let before = record.snapshot.received
        try await sandbox.raw("DELETE", "/_sandbox/connections/\(grants[revoked])")
        for index in [outage, expired, unauthorized] {
            try await sandbox.raw("POST", "/_sandbox/stream/cut", json: ["connection": grants[index]])
        }

        // The others go on receiving, the revoked one ends and is reported, the others recover by themselves.
        let settled = await waitUntil(120) {
            let now = record.snapshot
            let othersFlow = (0..<self.count).allSatisfy { victims.contains($0) || now.received[$0] >= before[$0] + 3 }
            return othersFlow && now.ended[revoked] && now.unpaired[revoked] >= 1 && now.resets[expired] >= 1
                && now.errors[outage] >= 1 && now.received[unauthorized] > before[unauthorized]
                && now.received[expired] > before[expired]
        }
        let seen = record.snapshot
        XCTAssertTrue(settled, "received \(seen.received) (before \(before)), \(seen.summary)")
        XCTAssertEqual(seen.unpaired[revoked], 1, "the lost connection is reported once")
        XCTAssertTrue(seen.ended[revoked], "its feed stopped")
        XCTAssertEqual(seen.lastError[revoked], ErrorCode.notPaired)
        XCTAssertEqual(seen.resets[expired], 1, "the expired cursor: one reset, then it reads on")
        XCTAssertEqual(seen.unpaired[unauthorized], 0, "an expired access token is renewed, not lost")
        XCTAssertEqual(seen.lastError[outage], ErrorCode.serviceUnavailable)
        for index in 0..<count where !victims.contains(index) {
            XCTAssertEqual(seen.errors[index] + seen.resets[index] + seen.unpaired[index], 0,
                           "restaurant \(restaurants[index]) noticed another's failure: \(seen.lastError[index] ?? "")")
            XCTAssertFalse(seen.ended[index])
        }
        // Only the two whose tokens were refused refreshed (the revoked one in vain): nobody else's was touched.
        let refreshes = try await sandbox.refreshes("moje-aplikace")
        XCTAssertTrue((1...2).contains(refreshes), "\(refreshes) refreshes")

        // The outage ends: that restaurant reads on from its cursor by itself.
        try await sandbox.raw("DELETE", "/_sandbox/faults")
        let outageCount = record.snapshot.received[outage]
        let recovered = await waitUntil(120) { record.snapshot.received[outage] > outageCount }
        XCTAssertTrue(recovered, "the restaurant whose feed failed reads on after the outage")
        XCTAssertEqual(record.snapshot.unpaired.reduce(0, +), 1, "one connection lost, reported once, in all")
        try await sandbox.raw("DELETE", "/_sandbox/events/generator")
        for watcher in watchers { watcher.stop() }
        for run in runs { await run.value }
    }
}

/// What the feeds of the test saw, per restaurant.
final class PartnerRecord: @unchecked Sendable {
    // @unchecked: every stored property is guarded by `lock`.
    struct Snapshot {
        var received: [Int]
        var unpaired: [Int]
        var resets: [Int]
        var errors: [Int]
        var lastError: [String?]
        var ended: [Bool]

        var summary: String {
            "unpaired \(unpaired.enumerated().filter { $0.1 > 0 }), resets \(resets.enumerated().filter { $0.1 > 0 }), "
                + "errors \(errors.enumerated().filter { $0.1 > 0 }), ended \(ended.enumerated().filter { $0.1 })"
        }
    }

    private let lock = NSLock()
    private var state: Snapshot

    init(count: Int) {
        state = Snapshot(received: Array(repeating: 0, count: count), unpaired: Array(repeating: 0, count: count),
                         resets: Array(repeating: 0, count: count), errors: Array(repeating: 0, count: count),
                         lastError: Array(repeating: nil, count: count), ended: Array(repeating: false, count: count))
    }

    var snapshot: Snapshot { lock.lock(); defer { lock.unlock() }; return state }
    func received(_ index: Int, _ n: Int) { lock.lock(); state.received[index] += n; lock.unlock() }
    func lost(_ index: Int) { lock.lock(); state.unpaired[index] += 1; lock.unlock() }
    func reset(_ index: Int) { lock.lock(); state.resets[index] += 1; lock.unlock() }
    func ended(_ index: Int) { lock.lock(); state.ended[index] = true; lock.unlock() }
    func failed(_ index: Int, _ error: any Error) {
        lock.lock()
        state.errors[index] += 1
        state.lastError[index] = (error as? ProfirestAPIError)?.code ?? "\(type(of: error))"
        lock.unlock()
    }
}

/// The example target `PartnerServer` (the article's pattern) against the sandbox: it makes its consents, serves the
/// restaurants, prints their events, and reports a revoked consent once.
final class PartnerServerExampleTests: XCTestCase {
    func testTheExampleServesRestaurantsAndReportsARevokedConsentOnce() async throws {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [here, Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL]
            .map { $0.appendingPathComponent("PartnerServer").path }
        guard let executable = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            let reason = "PartnerServer is not built next to the tests (swift build builds it)"
            if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail(reason) }
            throw XCTSkip(reason)
        }
        let sandbox = try SandboxServer.start()
        defer { sandbox.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--base", sandbox.api, "--sandbox-consents", "5", "--seconds", "30",
                             "--storage", directory.file("tokens.json"), "--restaurants", directory.file("restaurants.txt")]
        let output = Pipe()
        process.standardOutput = output
        let lines = Locked<[String]>([])
        let reader = Thread {
            var buffer = Data()
            while true {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    lines.withLock { $0.append(line) }
                }
            }
        }
        reader.start()
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let serving = await waitUntil(120) { lines.withLock { $0.contains("Serving 5 restaurants from \(sandbox.api)") } }
        XCTAssertTrue(serving, lines.withLock { $0.joined(separator: "\n") })
        try await sandbox.admin("POST", "events/generator", ["rate": 2, "client_id": "moje-aplikace"])
        let events = await waitUntil(120) { lines.withLock { $0.filter { $0.contains(": catalog.updated evt_") }.count >= 10 } }
        XCTAssertTrue(events, lines.withLock { $0.suffix(20).joined(separator: "\n") })
        let connections = (try await sandbox.admin("GET", "connections"))["data"]?.arrayValue ?? []
        let grant = try XCTUnwrap(connections.first { $0["kind"]?.stringValue == "partner" })
        let restaurant = try XCTUnwrap(grant["restaurant_ids"]?.arrayValue?.first?.stringValue)
        try await sandbox.raw("DELETE", "/_sandbox/connections/\(grant["id"]?.stringValue ?? "")")
        let reported = await waitUntil(120) { lines.withLock { $0.contains { $0.hasPrefix("restaurant \(restaurant): disconnected") } } }
        XCTAssertTrue(reported, lines.withLock { $0.suffix(20).joined(separator: "\n") })
        // The others go on: more events of other restaurants after the report.
        let after = lines.withLock { $0.count }
        let othersGoOn = await waitUntil(120) {
            lines.withLock { $0.dropFirst(after).contains { $0.contains(": catalog.updated") && !$0.hasPrefix("restaurant \(restaurant):") } }
        }
        XCTAssertTrue(othersGoOn)
        process.terminate()
        process.waitUntilExit()
        reader.cancel()
        XCTAssertEqual(lines.withLock { $0.filter { $0.hasPrefix("restaurant \(restaurant): disconnected") }.count }, 1,
                       "reported once")
    }
}
