import Foundation
import XCTest
@testable import ProfirestAPI

/// Every schema example of the contract decodes into its generated model and encodes back to the same JSON:
/// the generated shapes agree with the contract member for member.
final class SchemaExampleRoundTripTests: XCTestCase {
    private static let contractURL = packageRoot.appendingPathComponent("contract/profirest-v2.openapi.json")

    func testEveryExampleRoundTrips() throws {
        let contract = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: Self.contractURL))
        let schemas = try XCTUnwrap(contract["components"]?["schemas"]?.objectValue)
        XCTAssertEqual(Set(schemas.keys), Set(GeneratedSchemas.types.keys), "a model for every schema, no more")
        var checked = 0
        for (name, schema) in schemas.sorted(by: { $0.key < $1.key }) {
            let example = try XCTUnwrap(schema["example"], "\(name) has no example")
            let type = try XCTUnwrap(GeneratedSchemas.types[name])
            let data = try JSONEncoder().encode(example)
            let decoded: any Encodable
            do {
                decoded = try JSONDecoder().decode(type, from: data)
            } catch {
                XCTFail("\(name): the example does not decode: \(error)")
                continue
            }
            let reencoded = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(decoded))
            XCTAssertEqual(reencoded, example, "\(name) does not round-trip")
            checked += 1
        }
        XCTAssertEqual(checked, schemas.count)
    }
}
