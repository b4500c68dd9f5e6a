import Foundation
import XCTest
import ProfirestTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The sandbox (`python -m sandbox serve`) in a child process for integration tests over real sockets.
///
/// The interpreter is `$PROFIREST_SANDBOX_PYTHON` (the Makefile sets it) or `.venv/bin/python` in the package
/// root. Without one the tests are skipped with a hint — except under `CI=true`, where a missing sandbox fails.
final class SandboxServer: @unchecked Sendable {
    /// The child process; its stdin stays open for the sandbox's whole life, so if this test process dies, even
    /// by SIGKILL, the sandbox sees end of input and stops (`--exit-on-stdin-eof`): no server is left behind.
    let server: ChildServer
    let api: String
    private let session = URLSession(configuration: .ephemeral)

    static let packageRoot = ProfirestAPITests.packageRoot

    init() throws {
        let environment = ProcessInfo.processInfo.environment
        let python = environment["PROFIREST_SANDBOX_PYTHON"].flatMap { $0.isEmpty ? nil : $0 }
            ?? Self.packageRoot.appendingPathComponent(".venv/bin/python").path
        let hasSandbox = FileManager.default.fileExists(atPath: Self.packageRoot.appendingPathComponent("sandbox/__main__.py").path)
        guard FileManager.default.isExecutableFile(atPath: python), hasSandbox else {
            let message = "the sandbox is not available (\(python) or sandbox/ missing): run `make venv`, or `make swift-test`"
            if environment["CI"] == "true" {
                XCTFail(message)
                throw ProfirestTestFailure(message)
            }
            throw XCTSkip(message)
        }
        let server = try ChildServer(executable: python, arguments: sandboxArguments(validate: true), directory: Self.packageRoot)
        guard server.announcement["sandbox"] as? String == "ready", let api = server.announcement["api"] as? String else {
            server.stop()
            throw ProfirestTestFailure("the sandbox did not start: \(server.announcement)")
        }
        self.server = server
        self.api = api
    }

    func stop() { server.stop() }

    /// A raw request (no library involved), for the admin API and the OAuth setup.
    @discardableResult
    func raw(_ method: String, _ path: String, json: Any? = nil, form: String? = nil) async throws -> Any? {
        var request = URLRequest(url: URL(string: api + path)!)
        request.httpMethod = method
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let form {
            request.httpBody = Data(form.utf8)
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw ProfirestTestFailure("\(method) \(path) answered \(status): \(String(decoding: data, as: UTF8.self))")
        }
        return data.isEmpty ? nil : try JSONSerialization.jsonObject(with: data)
    }

    func fault(_ spec: [String: Any]) async throws { try await raw("POST", "/_sandbox/faults", json: spec) }

    /// Pairs a device the way the terminal would (device code, approval, token) and returns its access token.
    func deviceAccessToken(clientID: String = "profirest-dochazka",
                           scope: String = "restaurants:read staff:read staff:authenticate attendance:read attendance:punch") async throws -> String {
        let scopeForm = scope.replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: ":", with: "%3A")
        let start = try await raw("POST", "/oauth/device_authorization", form: "client_id=\(clientID)&scope=\(scopeForm)") as? [String: Any]
        guard let userCode = start?["user_code"] as? String, let deviceCode = start?["device_code"] as? String else {
            throw ProfirestTestFailure("no device code")
        }
        try await raw("POST", "/_sandbox/pairings/\(userCode)/approve", json: ["restaurant_id": "11"])
        let tokens = try await raw(
            "POST", "/oauth/token",
            form: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=\(deviceCode)&client_id=\(clientID)")
            as? [String: Any]
        guard let token = tokens?["access_token"] as? String else { throw ProfirestTestFailure("no access token") }
        return token
    }

    /// The last `limit` public requests as the sandbox saw them (tokens redacted).
    func requests(limit: Int) async throws -> [[String: Any]] {
        let answer = try await raw("GET", "/_sandbox/requests?limit=\(limit)")
        return (answer as? [[String: Any]]) ?? ((answer as? [String: Any])?["data"] as? [[String: Any]]) ?? []
    }

    func stats() async throws -> [String: Any] { (try await raw("GET", "/_sandbox/stats") as? [String: Any]) ?? [:] }
}

struct ProfirestTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
