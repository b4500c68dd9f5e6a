import Foundation
import XCTest
@testable import ProfirestAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The sandbox (`python -m sandbox serve --port 0 --db :memory: --validate --quiet`) as a child process on an
/// ephemeral port, with its admin API (`/_sandbox/…`) at hand. One per test: state never leaks between tests.
///
/// The interpreter is `$PROFIREST_SANDBOX_PYTHON` (the Makefile sets it), else `<repo>/.venv/bin/python`. When
/// neither runs the sandbox, the test is skipped — or fails under `CI=true`, where a skip would hide a gap.
final class SandboxServer: @unchecked Sendable {
    // @unchecked: every member is set once in init; Process is only touched from the test's thread.
    let api: String
    let pid: Int32
    private let process: Process
    private let session = URLSession(configuration: .ephemeral)

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Starts a sandbox, or skips / fails the calling test when it cannot run here.
    static func start(file: StaticString = #filePath, line: UInt = #line) throws -> SandboxServer {
        let root = repositoryRoot
        let env = ProcessInfo.processInfo.environment
        let python = env["PROFIREST_SANDBOX_PYTHON"].flatMap { $0.isEmpty ? nil : $0 }
            ?? root.appendingPathComponent(".venv/bin/python").path
        let usable = FileManager.default.isExecutableFile(atPath: python)
            && FileManager.default.fileExists(atPath: root.appendingPathComponent("sandbox/__main__.py").path)
        guard usable else {
            let reason = "the sandbox needs \(python) with its requirements (run `make venv`)"
            if env["CI"] == "true" {
                XCTFail(reason, file: file, line: line)
                throw XCTSkip(reason)
            }
            throw XCTSkip(reason)
        }
        do {
            return try SandboxServer(python: python, root: root)
        } catch {
            if env["CI"] == "true" { XCTFail("the sandbox did not start: \(error)", file: file, line: line) }
            throw XCTSkip("the sandbox did not start: \(error)")
        }
    }

    private init(python: String, root: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-m", "sandbox", "serve", "--port", "0", "--db", ":memory:", "--validate", "--quiet"]
        process.currentDirectoryURL = root
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // The first line is the ready object; it is flushed at once.
        var line = Data()
        let deadline = Date().addingTimeInterval(30)
        while !line.contains(UInt8(ascii: "\n")) && Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        // Keep draining, so a chatty server never blocks on a full pipe.
        output.fileHandleForReading.readabilityHandler = { handle in _ = handle.availableData }
        let first = line.prefix { $0 != UInt8(ascii: "\n") }
        guard let ready = try? JSONSerialization.jsonObject(with: first) as? [String: Any],
            ready["sandbox"] as? String == "ready", let api = ready["api"] as? String
        else {
            process.terminate()
            throw URLError(.cannotConnectToHost)
        }
        self.api = api
        pid = process.processIdentifier
    }

    /// Ends the server and waits for it. SIGTERM starts a graceful shutdown that waits for idle keep-alive
    /// connections (URLSession keeps them open), so after a moment the in-memory server is killed outright.
    func stop() {
        session.invalidateAndCancel()
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(1)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }

    // MARK: Admin API

    /// Calls `/_sandbox/<path>` and returns the JSON answer (or null for an empty one); fails on a non-2xx.
    @discardableResult
    func admin(_ method: String, _ path: String, _ body: JSONValue? = nil) async throws -> JSONValue {
        var request = URLRequest(url: URL(string: api + "/_sandbox/" + path)!)
        request.httpMethod = method
        if let body {
            request.httpBody = try JSONCoding.encode(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw AdminError(status: status, body: String(decoding: data, as: UTF8.self))
        }
        if data.isEmpty { return .null }
        return try JSONDecoder().decode(JSONValue.self, from: data)
    }

    struct AdminError: Error, CustomStringConvertible {
        let status: Int
        let body: String
        var description: String { "admin API answered \(status): \(body)" }
    }

    func config(_ values: JSONValue) async throws { try await admin("POST", "config", values) }

    /// `token_refreshes[clientID]` of `GET /_sandbox/stats`.
    func refreshes(_ clientID: String) async throws -> Int {
        try await admin("GET", "stats")["token_refreshes"]?[clientID]?.intValue ?? 0
    }

    /// The pending codes' user codes.
    func pendingCodes() async throws -> [String] {
        (try await admin("GET", "pairings")["data"]?.arrayValue ?? []).compactMap { $0["user_code"]?.stringValue }
    }

    /// A paired device's tokens at once (`POST /_sandbox/tokens`), written into `storage` under `key` as the
    /// state document every Profirest library reads — as if a pairing had just finished.
    @discardableResult
    func pairDevice(
        clientID: String, restaurantID: String = "11", storage: any TokenStorage, key: String? = nil
    ) async throws -> (deviceID: String, accessToken: String) {
        let tokens = try await admin("POST", "tokens", ["client_id": .string(clientID), "restaurant_id": .string(restaurantID)])
        var state = StoredState()
        state.accessToken = tokens["access_token"]?.stringValue
        state.refreshToken = tokens["refresh_token"]?.stringValue
        state.expiresAt = Date().addingTimeInterval(TimeInterval(tokens["expires_in"]?.intValue ?? 1800))
        state.tokenType = "Bearer"
        state.scopes = (tokens["scope"]?.stringValue ?? "").split(separator: " ").map(String.init)
        state.restaurantID = tokens["restaurant_id"]?.stringValue
        state.deviceID = tokens["device_id"]?.stringValue
        try storage.set(key ?? StateStore.defaultKey(clientID: clientID), try state.encoded())
        return (state.deviceID ?? "", state.accessToken ?? "")
    }

    /// A client of this sandbox; `sleep` stays real (the sandbox's intervals are real time).
    func client(
        clientID: String?, clientSecret: String? = nil, storage: any TokenStorage = MemoryTokenStorage(),
        storageKey: String? = nil, timeout: TimeInterval = 10, onUnpaired: (@Sendable (ProfirestAPIError) -> Void)? = nil
    ) -> ProfirestApi {
        ProfirestApi(options: .init(
            baseURL: api, clientID: clientID, clientSecret: clientSecret, language: "en", storage: storage,
            storageKey: storageKey, retries: 2, retryDelay: 0.05, timeout: timeout, onUnpaired: onUnpaired))
    }
}

/// Waits (really, in small steps) until `condition` holds or `seconds` pass.
func waitUntil(_ seconds: TimeInterval, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(nanoseconds: 50_000_000)
    }
    return try await condition()
}
