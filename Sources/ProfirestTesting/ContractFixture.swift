import Foundation
import ProfirestAPI

/// One example answer of the contract (`contract/profirest-v2.openapi.json`): the operation, its route, the status
/// and the example's JSON, which ``ProfirestTestServer`` answers and ``Fixtures`` decodes into models.
///
/// ```swift
/// let punch = try Fixtures.fixture("POST", "/v2/restaurants/{restaurant_id}/attendance/punches")?
///     .decode(as: AttendancePunch.self)
/// ```
public struct ContractFixture: Sendable, Hashable {
    /// The contract's `operationId`, such as `createAttendancePunch`.
    public let operationID: String
    /// The HTTP method in capitals.
    public let method: String
    /// The contract's path template, such as `/v2/restaurants/{restaurant_id}/attendance/punches`.
    public let path: String
    /// The status the example is the answer of.
    public let status: Int
    /// The example's JSON, compact with sorted keys.
    public let json: String

    init(operationID: String, method: String, path: String, status: Int, json: String) {
        self.operationID = operationID
        self.method = method
        self.path = path
        self.status = status
        self.json = json
    }

    /// The example as the response the kit's server sends: its status, JSON content type and body.
    public var response: APIResponse {
        APIResponse(status: status, headers: ["Content-Type": "application/json"], data: Data(json.utf8))
    }

    /// Decodes the example as the client decodes the answer.
    ///
    /// - Parameter type: the model, such as `AttendancePunch`.
    /// - Returns: the example as that model.
    /// - Throws: `DecodingError` when the example is not that model.
    public func decode<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try response.decode(as: type)
    }
}
