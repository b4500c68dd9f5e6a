import Foundation
import ProfirestTestSupport
import XCTest
@testable import ProfirestAPI

/// Where tokens and secrets may go: one rule (`Origin.mayCarrySecrets`), parsed hosts and never prefixes, held by
/// every guard against a table of hosts that look like this machine and are not.
final class OriginTests: XCTestCase {
    #if os(Linux)
    let isLinux = true
    #else
    let isLinux = false
    #endif

    /// Hosts written to look like loopback. Each is either refused over plain http or proven below to reach
    /// loopback through both transports.
    static let lookalikes: [(url: String, reachesLoopback: Bool)] = [
        ("http://127.0.0.1.example.com:8080", false),
        ("http://127.attacker.example:8080", false),
        ("http://localhost.example.com:8080", false),
        ("http://0x7f.0.0.1:8080", false),
        ("http://2130706433:8080", false),
        ("http://127.1:8080", false),
        ("http://0177.0.0.1:8080", false),
        ("http://127.000.000.001:8080", false),
        ("http://[::ffff:127.0.0.1]:8080", false),
        ("http://[::1%25lo]:8080", false),
        ("http://localhost.:8080", false),
        ("http://127.0.0.1.:8080", false),
        ("http://%31%32%37.0.0.1:8080", false),
        ("http://127.0.0.1%2Eevil.example:8080", false),
        ("http://127.0.0.1%00.evil.example:8080", false),
        ("http://127.0.0.1\\.evil.example:8080", false),
        ("http://127.0.0.1@evil.example:8080", false),
        ("http://evil.example#@127.0.0.1:8080", false),
        ("http://evil.example\\@127.0.0.1:8080", false),
        ("http://127.0.0.1\\@evil.example:8080", false),
        ("http://api.example.com", false),
        ("http://LOCALHOST:8080", true),
        ("http://localhost:8080", true),
        ("http://127.0.0.1:8080", true),
        ("http://127.255.3.4:8080", true),
        ("http://[::1]:8080", true),
        ("http://[0:0:0:0:0:0:0:1]:8080", true),
        ("HTTP://127.0.0.1:8080", true),
    ]

    func testTheRuleOnHosts() {
        for host in ["localhost", "LocalHost", "127.0.0.1", "127.0.0.255", "127.255.255.255", "::1", "[::1]", "0::1",
            "0:0:0:0:0:0:0:1", "::0:1"]
        {
            XCTAssertTrue(Origin.isLoopback(host: host), host)
        }
        for host in ["127.0.0.1.example.com", "127.attacker.example", "localhost.example.com", "0x7f.0.0.1",
            "2130706433", "127.1", "127.0.1", "0177.0.0.1", "127.00.0.1", "::ffff:127.0.0.1", "::1%lo", "::1%25lo",
            "localhost.", "127.0.0.1.", "%31%32%37.0.0.1", "128.0.0.1", "126.255.255.255", "127.0.0.256", "::2",
            "1::1", "::", "", "127.0.0.1 ", " 127.0.0.1", "127.0.0.-1", "127.0.0.+1", "::1::", ":::1", "0:0:0:0:0:0:0:0:1",
            "localhost%00", "xn--localhost", "local host"]
        {
            XCTAssertFalse(Origin.isLoopback(host: host), host)
        }
    }

    func testOriginsParseTheHostAsTheURLHoldsIt() throws {
        for (url, reachesLoopback) in Self.lookalikes {
            guard let parsed = URL(string: url), let origin = Origin(parsed) else {
                XCTAssertFalse(reachesLoopback, "\(url) did not parse")
                continue
            }
            XCTAssertEqual(origin.mayCarrySecrets, reachesLoopback, url)
        }
        XCTAssertTrue(try XCTUnwrap(Origin(URL(string: "https://127.attacker.example")!)).mayCarrySecrets)
    }

    // MARK: Every guard, through the public API

    /// A plain-http API call with a token: sent with the token only where the host is loopback, otherwise refused
    /// before anything goes out.
    func testAPICallsCarryTokensOnlyToLoopbackOverHTTP() async throws {
        for (url, reachesLoopback) in Self.lookalikes {
            let transport = ScriptedTransport { _ in .respond(APIResponse(status: 200, headers: [:], data: Data("{}".utf8))) }
            let api = ProfirestApi(options: .init(baseURL: url, accessToken: "secret-access-token", transport: transport))
            do {
                try await api.get("/connection")
                XCTAssertTrue(reachesLoopback, "\(url) got the token")
                XCTAssertEqual(transport.requests.first?.headers["Authorization"], "Bearer secret-access-token", url)
            } catch let error as ProfirestUsageError {
                XCTAssertFalse(reachesLoopback, "\(url): \(error.message)")
                XCTAssertFalse(error.message.contains("secret-access-token"), url)
            }
            XCTAssertFalse(
                transport.requests.contains { $0.headers["Authorization"] != nil && !reachesLoopback }, "\(url) got a token")
        }
    }

    /// The OAuth endpoints (pairing's device authorization and token polls) carry the client's secret and codes.
    func testOAuthEndpointsAreRefusedOffLoopbackOverHTTP() async throws {
        for (url, reachesLoopback) in Self.lookalikes where !reachesLoopback {
            let transport = ScriptedTransport { _ in .respond(APIResponse(status: 500)) }
            let api = ProfirestApi(options: .init(
                baseURL: url, clientID: "profirest-pos", clientSecret: "client-secret-123", transport: transport))
            let error = await thrown(ProfirestUsageError.self) { _ = try await api.pair(scope: "pos") }
            XCTAssertNotNil(error, url)
            XCTAssertEqual(transport.requests.count, 0, url)
            XCTAssertThrowsError(try api.authorizationURL(redirectURI: "app://cb", scope: "partner"), url)
        }
    }

    /// Revocation at unpair: the refresh token goes to /oauth/revoke only where secrets may go.
    func testRevocationIsNeverSentOffLoopbackOverHTTP() async throws {
        for (url, reachesLoopback) in Self.lookalikes where !reachesLoopback {
            let storage = MemoryTokenStorage()
            try storage.set(
                "profirest-api:profirest-pos",
                #"{"version":1,"access_token":"acc-1234567890","refresh_token":"ref-1234567890","restaurant_id":"11"}"#)
            let transport = ScriptedTransport { _ in .respond(APIResponse(status: 200)) }
            let api = ProfirestApi(options: .init(
                baseURL: url, clientID: "profirest-pos", storage: storage, transport: transport))
            await api.unpair()
            XCTAssertEqual(transport.requests.count, 0, url)
        }
    }

    /// The event stream is an API call like any other: no token over plain http off this machine.
    func testTheEventStreamIsNeverOpenedWithATokenOffLoopback() async throws {
        for (url, reachesLoopback) in Self.lookalikes where !reachesLoopback {
            let transport = ScriptedTransport { _ in .hang }
            let api = ProfirestApi(options: .init(baseURL: url, accessToken: "secret-access-token", transport: transport))
            let failed = Locked<[String]>([])
            let task = api.watchEvents(EventWatcher.Options(
                restaurantID: "11", types: [EventType.orderCreated.rawValue], onEvents: { _ in },
                onError: { error in failed.withLock { $0.append("\(error)") } }))
            let sawError = await eventually { !failed.withLock { $0 }.isEmpty }
            task.cancel()
            _ = await task.value
            XCTAssertTrue(sawError, url)
            XCTAssertFalse(transport.requests.contains { $0.headers["Authorization"] != nil }, url)
        }
    }

    /// The outbox delivers through the same core: a queued write is never sent with a token off loopback.
    func testTheOutboxNeverSendsATokenOffLoopback() async throws {
        for (url, reachesLoopback) in Self.lookalikes where !reachesLoopback {
            let transport = ScriptedTransport { _ in .respond(APIResponse(status: 201)) }
            let api = ProfirestApi(options: .init(baseURL: url, accessToken: "secret-access-token", transport: transport))
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let outbox = try api.outbox(path: directory.file("outbox.json"))
            _ = try? await outbox.post("/restaurants/11/attendance/punches", body: ["type": "clock_in"])
            _ = await outbox.flush()
            XCTAssertFalse(transport.requests.contains { $0.headers["Authorization"] != nil }, url)
        }
    }

    /// A redirect is never followed, whatever its Location looks like: one request, `unexpected_redirect`.
    func testRedirectsAreNeverFollowedToALookalike() async throws {
        for (url, _) in Self.lookalikes {
            let transport = ScriptedTransport { _ in .respond(APIResponse(status: 302, headers: ["Location": url + "/v2/connection"])) }
            let api = ProfirestApi(options: .init(
                baseURL: "http://127.0.0.1:8080", accessToken: "secret-access-token", transport: transport))
            let error = await apiError { try await api.get("/connection") }
            XCTAssertEqual(error?.code, ErrorCode.unexpectedRedirect, url)
            XCTAssertEqual(transport.requests.count, 1, url)
        }
    }

    /// An absolute URL of another origin gets no token, however much it looks like the API's loopback address.
    func testAbsoluteURLsThatLookLikeTheAPIGetNoToken() async throws {
        let base = try XCTUnwrap(Origin(URL(string: "http://127.0.0.1:8080")!))
        for (url, _) in Self.lookalikes where URL(string: url).flatMap(Origin.init) != base {
            let transport = ScriptedTransport { _ in .respond(APIResponse(status: 200, headers: [:], data: Data("{}".utf8))) }
            let api = ProfirestApi(options: .init(
                baseURL: "http://127.0.0.1:8080", accessToken: "secret-access-token", transport: transport))
            _ = try? await api.get(url + "/v2/connection")
            XCTAssertFalse(transport.requests.contains { $0.headers["Authorization"] != nil }, url)
        }
    }

    /// The address the manager signs in at must be https (or this machine): otherwise pairing does not start.
    func testVerificationURIsOffLoopbackOverHTTPAreRefused() async throws {
        for (url, reachesLoopback) in Self.lookalikes {
            let answer: JSONValue = [
                "device_code": "dev-code-123456", "user_code": "KXCB-TQPW", "verification_uri": .string(url + "/pair"),
                "verification_uri_complete": .string(url + "/pair?code=KXCB-TQPW"), "expires_in": 600, "interval": 5,
            ]
            let transport = ScriptedTransport { _ in
                .respond(APIResponse(status: 200, headers: ["Content-Type": "application/json"], data: try JSONCoding.encode(answer)))
            }
            let api = ProfirestApi(options: .init(
                baseURL: "https://api.mujprofirest.cz", clientID: "profirest-pos", transport: transport))
            do {
                let pairing = try await api.pair(scope: "pos")
                XCTAssertTrue(reachesLoopback, "\(url) was accepted")
                pairing.cancel()
            } catch let error as ProfirestAPIError {
                XCTAssertFalse(reachesLoopback, url)
                XCTAssertEqual(error.code, ErrorCode.invalidResponse, url)
            }
        }
        let https = ScriptedTransport { _ in
            .respond(APIResponse(status: 200, headers: ["Content-Type": "application/json"], data: Data(
                #"{"device_code":"d","user_code":"U","verification_uri":"https://127.attacker.example/p","expires_in":600,"interval":5,"verification_uri_complete":"https://127.attacker.example/p?c=U"}"#.utf8)))
        }
        let api = ProfirestApi(options: .init(clientID: "profirest-pos", transport: https))
        try await api.pair(scope: "pos").cancel()
    }

    // MARK: Base addresses

    func testCredentialsInTheBaseURLAreAUsageErrorAndNeverPrinted() async throws {
        for url in ["http://user:hunter2-password@127.0.0.1:8080", "https://user:hunter2-password@api.example.com",
            "https://hunter2-password@api.example.com"]
        {
            let transport = ScriptedTransport { _ in .respond(APIResponse(status: 200)) }
            let options = ProfirestApi.Options(baseURL: url, accessToken: "t", transport: transport)
            let api = ProfirestApi(options: options)
            let error = await usageError { try await api.get("/connection") }
            XCTAssertTrue(error?.message.contains("user name or password") == true, url)
            XCTAssertEqual(transport.requests.count, 0)
            var dumped = ""
            dump(api, to: &dumped)
            dump(options, to: &dumped)
            let shown = [String(describing: api), String(reflecting: api), "\(options)", dumped, error?.message ?? "",
                String(describing: error as Any)]
            for text in shown { XCTAssertFalse(text.contains("hunter2"), text) }
        }
    }

    func testBaseURLsWithV2AQueryOrAFragmentSayWhatToWrite() async throws {
        let cases = [
            ("https://api.mujprofirest.cz/v2", "https://api.mujprofirest.cz\""),
            ("https://api.mujprofirest.cz/v2/", "https://api.mujprofirest.cz\""),
            ("http://127.0.0.1:8080/V2", "http://127.0.0.1:8080\""),
            ("https://api.mujprofirest.cz?x=1", "query"),
            ("https://api.mujprofirest.cz#top", "fragment"),
        ]
        for (url, expected) in cases {
            let api = ProfirestApi(options: .init(baseURL: url, transport: ScriptedTransport([])))
            let error = await usageError { try await api.get("/connection") }
            XCTAssertTrue(error?.message.contains(expected) == true, "\(url): \(error?.message ?? "")")
        }
        // A path before the API's own is kept (a gateway's prefix).
        let transport = ScriptedTransport([.respond(APIResponse(status: 200, headers: [:], data: Data("{}".utf8)))])
        let api = ProfirestApi(options: .init(baseURL: "https://gateway.example/profirest/", transport: transport))
        try await api.get("/connection")
        XCTAssertEqual(transport.requests.first?.url.absoluteString, "https://gateway.example/profirest/v2/connection")
    }

    // MARK: What is accepted does reach this machine

    /// Every spelling the rule accepts is proven to reach a listener on loopback through both transports.
    func testAcceptedSpellingsReachLoopbackThroughEachTransport() async throws {
        let v4 = try LoopbackServer()
        defer { v4.stop() }
        let v6 = try LoopbackServer(host: "::1")
        defer { v6.stop() }
        let hosts = [("127.0.0.1", v4.port), ("LOCALHOST", v4.port), ("localhost", v4.port), ("[::1]", v6.port),
            ("[0:0:0:0:0:0:0:1]", v6.port)]
        for kind in TransportKind.available {
            let transport = kind.make()
            for (host, port) in hosts {
                let url = "http://\(host):\(port)"
                XCTAssertTrue(try XCTUnwrap(Origin(URL(string: url)!)).mayCarrySecrets, url)
                let api = ProfirestApi(options: .init(baseURL: url, accessToken: "loopback-token", transport: transport))
                do {
                    let echo: JSONValue = try await api.get("/echo")
                    XCTAssertEqual(echo["headers"]?["authorization"]?.stringValue, "Bearer loopback-token", "\(kind) \(url)")
                } catch let error as ProfirestAPIError where kind == .urlSession && host.hasPrefix("[") && isLinux {
                    // FoundationNetworking on Linux takes no IPv6 literal (URLError -1000, bad URL): the request goes
                    // nowhere, which is as safe as reaching loopback.
                    XCTAssertEqual(error.code, ErrorCode.networkError, "\(url): \(error)")
                } catch {
                    XCTFail("\(kind) \(url): \(error)")
                }
            }
        }
    }
}
