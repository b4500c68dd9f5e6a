import Foundation
import ProfirestTestSupport
import XCTest
@testable import ProfirestAPI
@testable import ProfirestPostgres

/// PostgresTokenStorage under ProfirestApi: a damaged row is an error, not an unpairing; replicas sharing the table
/// spend a refresh token once. The server is ScriptedTransport, in memory.
final class PostgresLibraryTests: PostgresTestCase {
    private static func json(_ status: Int, _ object: [String: Any]) -> ScriptedTransport.Reply {
        let data = try! JSONSerialization.data(withJSONObject: object)
        return .respond(APIResponse(status: status, headers: ["Content-Type": "application/json"], data: data))
    }

    private static let connection = json(200, [
        "client_id": "partner", "kind": "partner", "restaurant_id": "11", "restaurants": [], "scopes": ["restaurants:read"],
    ])

    /// A transport that hands out `at_new` for `rt_old` (once: a second use of `rt_old` is invalid_grant, as a strict
    /// server answers) and answers API requests made with `at_new`, 401 otherwise.
    private static func strictServer() -> ScriptedTransport {
        let spent = Failures()  // used here as a counter of refreshes
        return ScriptedTransport { request in
            if request.url.path == "/oauth/token" {
                let body = String(decoding: request.body ?? Data(), as: UTF8.self)
                guard body.contains("refresh_token=rt_old"), spent.all.isEmpty else {
                    return json(400, ["error": "invalid_grant", "error_description": "spent"])
                }
                spent.record(CancellationError())
                try await Task.sleep(nanoseconds: 50_000_000)  // the other replica's requests pile up meanwhile
                return json(200, [
                    "access_token": "at_new_0123456789", "refresh_token": "rt_new_0123456789", "token_type": "Bearer",
                    "expires_in": 1800, "scope": "restaurants:read",
                ])
            }
            let authorization = request.header("Authorization")
            return authorization == "Bearer at_new_0123456789" ? connection : json(401, [
                "type": "https://api.mujprofirest.cz/problems/invalid_token", "title": "Invalid token", "status": 401,
                "code": "invalid_token", "request_id": "req_1",
            ])
        }
    }

    private func api(_ storage: PostgresTokenStorage, _ transport: ScriptedTransport) -> ProfirestApi {
        ProfirestApi(options: .init(
            baseURL: "https://api.mujprofirest.cz", clientID: "partner", storage: storage, transport: transport))
    }

    /// A row that cannot be read is not "unpaired": an app that pairs when `isPaired` is false must not start over
    /// tokens it cannot see, and the row is left for someone to look at.
    func testACorruptRowIsNeverTakenForUnpairedAndEveryRequestThrowsTheStorageError() async throws {
        let storage = try storage()
        try server.admin().sql(
            "INSERT INTO \(table) (key, value) VALUES ('profirest-api:x', '{\"access_token\": \"at_secret')")
        let api = ProfirestApi(options: .init(baseURL: "http://127.0.0.1:9", clientID: "x", storage: storage))
        XCTAssertTrue(api.isPaired, "unknown is not unpaired")
        for attempt in 0..<2 {
            do {
                _ = try await api.connection()
                XCTFail("expected a storage error")
            } catch let error as StorageError {
                XCTAssertEqual(error.kind, .corrupt, "attempt \(attempt)")
                XCTAssertTrue(error.description.contains("profirest-api:x"), error.description)
                XCTAssertFalse(error.description.contains("at_secret"), error.description)
            }
        }
        XCTAssertEqual(api.storageError?.kind, .corrupt)
        do {
            _ = try await api.pair(scope: "kitchen:read")
            XCTFail("pairing over a row it cannot read")
        } catch let error as StorageError {
            XCTAssertEqual(error.kind, .corrupt)
        }
        XCTAssertEqual(try server.admin().sql("SELECT value FROM \(table) WHERE key = 'profirest-api:x'"),
                       ["{\"access_token\": \"at_secret"], "never reset")
    }

    func testTwoReplicasOnOneTableSpendTheRefreshTokenOnce() async throws {
        // Both replicas' tokens expired 10 s ago; each sends 10 requests at once.
        var state = StoredState()
        state.accessToken = "at_old_0123456789"
        state.refreshToken = "rt_old"
        state.expiresAt = Date().addingTimeInterval(-10)
        try storage().set("profirest-api:partner", try state.encoded())
        let transport = Self.strictServer()
        let replicas = [api(try storage(), transport), api(try storage(), transport)]
        let outcomes = await withTaskGroup(of: String.self) { group in
            for index in 0..<20 {
                group.addTask {
                    do {
                        return try await replicas[index % 2].connection().restaurantId ?? "?"
                    } catch {
                        return String(describing: error)
                    }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        XCTAssertEqual(outcomes, Array(repeating: "11", count: 20))
        XCTAssertEqual(transport.requests("POST", "/oauth/token").count, 1, "one refresh for both replicas")
        let stored = try XCTUnwrap(try storage().get("profirest-api:partner"))
        XCTAssertTrue(stored.contains("rt_new_0123456789"))
        XCTAssertTrue(replicas.allSatisfy(\.isPaired))
    }
}
