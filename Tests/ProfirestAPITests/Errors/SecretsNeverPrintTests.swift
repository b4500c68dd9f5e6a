import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// What an app developer sees when debugging — `String(describing:)`, `String(reflecting:)`, string interpolation,
/// `dump` and a crash reporter walking the `Mirror` — never contains a token, a client secret, a PIN, a device code
/// or a PKCE verifier, for every public type that can hold one; the other members still show, so the output helps.
final class SecretsNeverPrintTests: XCTestCase {
    // Distinct and long enough that they cannot turn up in the output by chance.
    static let access = "at_SECRET_access_7f3c9e1b"
    static let refresh = "rt_SECRET_refresh_52d08a4e"
    static let clientSecret = "cs_SECRET_client_9a61b7f0"
    static let staffToken = "st_SECRET_staff_0c8e4d2a"
    static let pin = "739164"
    static let deviceCode = "dc_SECRET_device_4b7e1f93"
    static let verifier = "pkce_SECRET_verifier_2e9d5c0a6b8f1d3e7a4c9b0e5f2d8a1c6b3e9f"

    // MARK: - Hand-written types

    func testOptionsShowTheirSettingsButNotTheClientSecretOrAccessToken() {
        let options = ProfirestApi.Options(clientID: "profirest-pos", clientSecret: Self.clientSecret, accessToken: Self.access)
        assertNoSecrets(options, [Self.clientSecret, Self.access],
                        shows: ["profirest-pos", "https://api.mujprofirest.cz", "clientSecret: <redacted>",
                                "accessToken: <redacted>", "MemoryTokenStorage"])
        assertNoSecrets(ProfirestApi.Options(clientID: "profirest-pos"), [], shows: ["clientSecret: nil", "accessToken: nil"])
        assertNoSecrets(ProfirestApi(options: options), [Self.clientSecret, Self.access], shows: ["profirest-pos"])
    }

    func testTheClientAfterARefreshAndAStaffSignInShowsNoToken() async throws {
        let newAccess = "at_SECRET_new_access_81c2", newRefresh = "rt_SECRET_new_refresh_6d3f"
        let transport = ScriptedTransport { request in
            switch request.url.path {
            case "/oauth/token": return Answers.tokens(newAccess, refresh: newRefresh)
            case "/v2/restaurants/11/staff/sessions": return Answers.staffSession(token: Self.staffToken)
            default: return request.bearer == newAccess ? Answers.connection : .problem(401, ErrorCode.invalidToken)
            }
        }
        let client = try WiredClient(
            transport: transport, clientSecret: Self.clientSecret, tokens: (Self.access, Self.refresh, 86_400),
            sleeping: .untilAdvanced)
        _ = try await client.api.connection()  // 401, refresh, then the new token
        _ = try await client.api.signInStaff(restaurantID: "11", credential: StaffCredential(method: "pin", secret: Self.pin))
        XCTAssertEqual(transport.requests("POST", "/oauth/token").count, 1, "the client holds refreshed tokens")
        XCTAssertNotNil(client.api.staff)
        let secrets = [Self.access, Self.refresh, newAccess, newRefresh, Self.clientSecret, Self.staffToken, Self.pin]
        assertNoSecrets(client.api, secrets, shows: ["profirest-pos", "emp_1"])
        assertNoSecrets(client.storage, secrets, shows: ["profirest-api:profirest-pos"])
        assertNoSecrets(client.api.options, secrets, shows: ["clientSecret: <redacted>"])
    }

    func testAFixedAccessTokenClientShowsNoToken() async throws {
        let h = Harness([ok], accessToken: Self.access)
        try await h.api.get("/connection")
        assertNoSecrets(h.api, [Self.access], shows: ["accessToken: <redacted>"])
    }

    func testRequestOptionsHideBearerStaffTokenAndCredentialHeaders() {
        let options = RequestOptions(
            query: ["channel": "pos"], staff: .token(Self.staffToken),
            headers: ["X-Api-Key": Self.clientSecret, "X-Trace": "trace-42"], auth: .bearer(Self.access))
        assertNoSecrets(options, [Self.staffToken, Self.clientSecret, Self.access],
                        shows: ["bearer(<redacted>)", "token(<redacted>)", "trace-42", "X-Api-Key", "pos"])
        assertNoSecrets(RequestOptions.Auth.bearer(Self.access), [Self.access], shows: ["bearer(<redacted>)"])
        assertNoSecrets(RequestOptions.Staff.token(Self.staffToken), [Self.staffToken], shows: ["token(<redacted>)"])
    }

    func testPairingShowsTheUserCodeButNotTheDeviceCode() throws {
        let state = PairingState(
            deviceCode: Self.deviceCode, userCode: "KXCB-TQPW", verificationURI: "https://mujprofirest.cz/pair",
            verificationURIComplete: "https://mujprofirest.cz/pair?code=KXCB-TQPW", interval: 5,
            expiresAt: Date(timeIntervalSince1970: 1_800_000_600))
        assertNoSecrets(state, [Self.deviceCode], shows: ["KXCB-TQPW"])
        let api = ProfirestApi(options: .init(clientID: "profirest-pos", transport: ScriptedTransport([], timer: ManualTimer())))
        assertNoSecrets(try api.resumePairing(state), [Self.deviceCode], shows: ["KXCB-TQPW"])
    }

    func testRequestsAndResponsesShowHeadersButNotCredentialsOrBodies() {
        let request = HTTPRequest(
            method: "POST", url: URL(string: "https://api.mujprofirest.cz/oauth/token")!,
            headers: ["Authorization": "Bearer \(Self.access)", "Profirest-Staff-Token": Self.staffToken,
                      "Idempotency-Key": "key-7"],
            body: Data("grant_type=refresh_token&refresh_token=\(Self.refresh)".utf8))
        assertNoSecrets(request, [Self.access, Self.staffToken, Self.refresh],
                        shows: ["/oauth/token", "key-7", "Authorization", "bytes>"])
        let response = APIResponse(
            status: 200, headers: ["Content-Type": "application/json"],
            data: Data("{\"access_token\":\"\(Self.access)\"}".utf8))
        assertNoSecrets(response, [Self.access], shows: ["200", "application/json"])
    }

    func testTheOutboxShowsItsItemsButNotThePunchCredential() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let h = Harness([.fail(URLError(.notConnectedToInternet))], accessToken: Self.access)
        let outbox = try h.api.outbox(path: directory.appendingPathComponent("outbox.json").path)
        let punch = AttendancePunchCreate(
            id: ProfirestApi.uuid(), type: "clock_in", credential: StaffCredential(method: "pin", secret: Self.pin))
        guard case .queued = try await outbox.punch(restaurantID: "11", punch) else { return XCTFail("offline: queued") }
        assertNoSecrets(outbox, [Self.pin, Self.access], shows: [punch.id, "/restaurants/11/attendance/punches"])
        assertNoSecrets(punch, [Self.pin], shows: [punch.id, "clock_in", "secret: <redacted>"])
    }

    // MARK: - Generated models (x-secret in the contract)

    func testGeneratedModelsShowSecretMembersOnlyAsPresent() {
        let tokens = TokenResponse(
            accessToken: Self.access, tokenType: "Bearer", deviceId: "dev_7Q2M", expiresIn: 1800,
            refreshToken: Self.refresh, restaurantId: "11", scope: "restaurants:read")
        assertNoSecrets(tokens, [Self.access, Self.refresh],
                        shows: ["accessToken: <redacted>", "refreshToken: <redacted>", "Bearer", "dev_7Q2M", "1800"])
        let withoutRefresh = TokenResponse(accessToken: Self.access, tokenType: "Bearer", expiresIn: 1800, scope: "x")
        assertNoSecrets(withoutRefresh, [Self.access], shows: ["refreshToken: nil"])
        assertNoSecrets(StaffCredential(method: "pin", secret: Self.pin), [Self.pin], shows: ["pin", "secret: <redacted>"])
        let session = StaffSession(
            token: Self.staffToken, employee: StaffEmployee(id: "emp_1", name: "Jana", role: "manager"), restaurantId: "11",
            idleTimeoutSeconds: 300, maxExpiresAt: Date(timeIntervalSince1970: 1_800_000_000))
        assertNoSecrets(session, [Self.staffToken], shows: ["token: <redacted>", "emp_1", "Jana"])
        assertNoSecrets(
            DeviceAuthorization(
                deviceCode: Self.deviceCode, userCode: "KXCB-TQPW", verificationUri: "https://x",
                expiresIn: 600, interval: 5, verificationUriComplete: "https://x"),
            [Self.deviceCode], shows: ["KXCB-TQPW"])
        assertNoSecrets(
            TokenRequest(grantType: "authorization_code", clientId: "moje-aplikace", code: "code_SECRET_4d1e", codeVerifier: Self.verifier,
                         refreshToken: Self.refresh),
            ["code_SECRET_4d1e", Self.verifier, Self.refresh], shows: ["moje-aplikace", "authorization_code"])
        assertNoSecrets(RevocationRequest(token: Self.refresh, tokenTypeHint: "refresh_token"), [Self.refresh], shows: ["refresh_token"])
    }

    // MARK: - The check

    /// Fails when any way of printing `value` shows one of `secrets`, or leaves out one of `shows`.
    private func assertNoSecrets<T>(
        _ value: T, _ secrets: [String], shows expected: [String], file: StaticString = #filePath, line: UInt = #line
    ) {
        var dumped = ""
        dump(value, to: &dumped)
        let outputs = [
            "String(describing:)": String(describing: value), "String(reflecting:)": String(reflecting: value),
            "interpolation": "\(value)", "dump": dumped, "Mirror": Self.walk(Mirror(reflecting: value), depth: 0),
        ]
        for (way, text) in outputs.sorted(by: { $0.key < $1.key }) {
            for secret in secrets where text.contains(secret) {
                XCTFail("\(way) of \(T.self) shows the secret \(secret):\n\(text)", file: file, line: line)
            }
        }
        for wanted in expected where !dumped.contains(wanted) {
            XCTFail("\(T.self) no longer shows \(wanted):\n\(String(describing: value))\n\(dumped)", file: file, line: line)
        }
    }

    /// Every label and leaf a crash reporter walking the mirror would see; strings also as their bytes' text.
    private static func walk(_ mirror: Mirror, depth: Int) -> String {
        guard depth < 12 else { return "" }
        return mirror.children.map { child in
            let leaf: String
            switch child.value {
            case let text as String: leaf = text
            case let data as Data: leaf = String(decoding: data, as: UTF8.self)
            default: leaf = ""
            }
            return (child.label ?? "") + "=" + leaf + "\n" + walk(Mirror(reflecting: child.value), depth: depth + 1)
        }.joined()
    }
}
