import Foundation
@testable import ProfirestAPI

/// Partner consents the sandbox granted at once (`consents/bulk`), stored the way a finished consent leaves them: one
/// storage, a key a restaurant.
struct BulkConsents {
    /// The sandbox's rows: `restaurant_id`, `connection_id`, the tokens.
    let rows: [JSONValue]
    let restaurants: [String]
    let storage = MemoryTokenStorage()

    /// The storage key of the index-th restaurant's connection.
    func key(_ index: Int) -> String { "profirest-api:moje-aplikace:restaurant-\(restaurants[index])" }

    init(_ sandbox: SandboxServer, count: Int, scope: String) async throws {
        let bulk = try await sandbox.admin("POST", "consents/bulk", ["count": .integer(count), "scope": .string(scope)])
        rows = bulk["data"]?.arrayValue ?? []
        guard rows.count == count else { throw ProfirestTestFailure("the sandbox granted \(rows.count) of \(count) consents") }
        restaurants = rows.map { $0["restaurant_id"]?.stringValue ?? "" }
        for (index, row) in rows.enumerated() {
            var state = StoredState()
            state.accessToken = row["access_token"]?.stringValue
            state.refreshToken = row["refresh_token"]?.stringValue
            state.expiresAt = Date().addingTimeInterval(TimeInterval(row["expires_in"]?.intValue ?? 1800))
            state.tokenType = "Bearer"
            try storage.set(key(index), try state.encoded())
        }
    }
}
