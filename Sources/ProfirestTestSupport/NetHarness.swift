import Foundation

/// `tools/net_harness.py` in a child process: nginx with TLS from a private CA in front of a local server (HTTP/2,
/// HTTP/1.1, a buffering proxy, a short idle timeout, a proxy login, a certificate nobody trusts), and a TCP proxy
/// that delays each way or freezes its connections — the real network of the tests and the bench. Not part of the
/// library.
///
/// ```swift
/// let net = try NetHarness(upstream: "http://127.0.0.1:\(port)", delayMilliseconds: 50)
/// let url = net.url(.h2, "/v2/staff")
/// ```
public final class NetHarness: @unchecked Sendable {
    // @unchecked: every stored property is set in init and never changes.
    /// The server blocks of the harness's nginx.
    public enum Block: String, CaseIterable, Sendable {
        case h2, h1, h1Buffering = "h1_buffering", h1ShortIdle = "h1_short_idle", basic, untrusted
    }

    public let server: ChildServer
    /// The private CA every block but `untrusted` has its certificate from (a PEM file).
    public let caFile: String
    /// nginx's port of each block, and the delaying proxy's port in front of each block.
    public let ports: [Block: Int]
    public let delayedPorts: [Block: Int]
    /// The delaying proxy's port straight to the upstream (plain HTTP).
    public let delayedUpstreamPort: Int
    /// The `basic` block's user and password.
    public let basicUser: String
    public let basicPassword: String
    public let nginxVersion: String

    /// Starts the harness in front of `upstream`; throws `NetHarness.Unavailable` when nginx or openssl is missing
    /// (a test turns that into a skip, or a failure under CI), `ChildServerFailure` when it does not start.
    /// `h2MaxStreams`: how many streams one HTTP/2 connection of the `h2` block may carry (nginx's default 128).
    public init(
        upstream: String, delayMilliseconds: Double = 0, shortIdleSeconds: Double? = nil, h2MaxStreams: Int? = nil,
        root: URL
    ) throws {
        var arguments = [root.appendingPathComponent("tools/net_harness.py").path, "--upstream", upstream,
                         "--delay-ms", String(delayMilliseconds)]
        if let shortIdleSeconds { arguments += ["--short-idle-seconds", String(shortIdleSeconds)] }
        if let h2MaxStreams { arguments += ["--h2-max-streams", String(h2MaxStreams)] }
        let server: ChildServer
        do {
            server = try ChildServer(executable: "/usr/bin/env", arguments: ["python3"] + arguments)
        } catch let failure as ChildServerFailure where failure.description.contains("not installed") {
            throw Unavailable(reason: failure.description)
        }
        let a = server.announcement
        guard let ca = a["ca_file"] as? String, let nginx = a["nginx"] as? [String: Int],
              let delayed = a["delayed"] as? [String: Int], let upstreamPort = delayed["upstream"] else {
            server.stop()
            throw ChildServerFailure("net_harness.py did not start: \(a)")
        }
        self.server = server
        caFile = ca
        ports = Dictionary(uniqueKeysWithValues: Block.allCases.compactMap { b in nginx[b.rawValue].map { (b, $0) } })
        delayedPorts = Dictionary(uniqueKeysWithValues: Block.allCases.compactMap { b in delayed[b.rawValue].map { (b, $0) } })
        delayedUpstreamPort = upstreamPort
        basicUser = a["basic_user"] as? String ?? ""
        basicPassword = a["basic_password"] as? String ?? ""
        nginxVersion = a["nginx_version"] as? String ?? "?"
    }

    /// `https://127.0.0.1:<port><path>` of `block`, straight or through the delaying proxy.
    public func url(_ block: Block, _ path: String = "", delayed: Bool = false) -> URL {
        URL(string: base(block, delayed: delayed) + path)!
    }

    /// The base URL of `block` for a client's `baseURL`.
    public func base(_ block: Block, delayed: Bool = false) -> String {
        "https://127.0.0.1:\((delayed ? delayedPorts : ports)[block] ?? 0)"
    }

    /// Stops forwarding on every connection the delaying proxy has now, without closing them (a half-open
    /// connection); new connections still work. Returns how many it froze.
    @discardableResult
    public func freeze() -> Int { server.command("freeze")?["connections"] as? Int ?? -1 }

    public func stop() { server.stop() }

    /// nginx (or openssl) is not installed here.
    public struct Unavailable: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }
}
