import Foundation
import ProfirestAPI

/// The contract's example answers, generated from `contract/profirest-v2.openapi.json` (`make generate`): what
/// ``ProfirestTestServer`` answers by default, and the same bodies as typed models for a test's expectations.
///
/// Each operation with a JSON example has a property named after its `operationId` holding its default answer (the
/// 201 of a create, else its first 2xx) as the client's model; ``all`` lists every example.
///
/// ```swift
/// let staff: StaffMemberPage = Fixtures.listStaff
/// XCTAssertEqual(staff.data.first?.name, "Jana Nováková")
/// ```
public enum Fixtures {
    /// Every JSON example answer (2xx) of the contract, in the contract's order.
    public static var all: [ContractFixture] { contract }

    /// The default example answer of a route: its 201 when it has one, else its first 2xx with an example.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, such as `GET`.
    ///   - path: the contract's path template (`/v2/restaurants/{restaurant_id}/staff`) or a path that fits it
    ///     (`/v2/restaurants/11/staff`).
    /// - Returns: the example, or nil when the contract has none for the route.
    public static func fixture(_ method: String, _ path: String) -> ContractFixture? {
        let candidates = contract.filter { $0.method == method.uppercased() && RouteTemplate.matches($0.path, path) }
        return candidates.first { $0.status == 201 } ?? candidates.first
    }

    /// The example of `operationID` with `status` as a model; the generated properties call it. The examples are
    /// checked to decode by the kit's tests, so a failure here is a contract whose example does not fit its schema.
    static func model<T: Decodable>(of operationID: String, status: Int) -> T {
        guard let fixture = contract.first(where: { $0.operationID == operationID && $0.status == status }) else {
            preconditionFailure("the contract has no example for \(operationID) \(status)")
        }
        do {
            return try fixture.decode(as: T.self)
        } catch {
            preconditionFailure("the contract's example for \(operationID) \(status) is not a \(T.self): \(error)")
        }
    }
}
