import Foundation
import XCTest
@testable import ProfirestCodegenKit

/// `x-secret: true` members: the model gets a description and mirror that show them only as present or absent,
/// and models without one keep Swift's default printing.
final class SecretMemberTests: XCTestCase {
    private func models(_ schemas: String) throws -> String {
        let contract = """
        {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {},
         "x-error-catalog": [{"code": "staff_ambiguous", "status": 409, "retryable": false, "library_only": false,
                              "title": {"cs": "a", "en": "b"}, "description": "d"}],
         "components": {"schemas": \(schemas)}}
        """
        let files = try Generator(contract: Data(contract.utf8)).files()
        return try XCTUnwrap(files["Models.swift"])
    }

    func testSecretMembersAreRedactedAndTheOthersShowAsTheyAre() throws {
        let out = try models("""
        {"Tokens": {"type": "object", "required": ["access_token", "scope"], "properties": {
            "access_token": {"type": "string", "x-secret": true}, "scope": {"type": "string"},
            "refresh_token": {"type": "string", "x-secret": true}, "device_id": {"type": "string"}}},
         "Plain": {"type": "object", "properties": {"token_type": {"type": "string"}}}}
        """)
        XCTAssertTrue(out.contains("extension Tokens: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {"))
        XCTAssertTrue(out.contains("/// Every member, `accessToken` and `refreshToken` only as `<redacted>` or `nil`"))
        XCTAssertTrue(out.contains("public var description: String { RedactedFields.description(of: \"Tokens\", redactedFields) }"))
        XCTAssertTrue(out.contains("public var debugDescription: String { description }"))
        XCTAssertTrue(out.contains("public var customMirror: Mirror { Mirror(self, children: redactedFields, displayStyle: .struct) }"))
        XCTAssertTrue(out.contains("(\"accessToken\", RedactedSecret(self.accessToken)),"))
        XCTAssertTrue(out.contains("(\"refreshToken\", RedactedSecret(self.refreshToken)),"))
        XCTAssertTrue(out.contains("(\"scope\", self.scope),"), "a plain member shows as it is")
        XCTAssertTrue(out.contains("(\"deviceId\", self.deviceId as Any),"), "an optional member shows as it is")
        XCTAssertFalse(out.contains("extension Plain:"), "a model without secrets keeps the default printing")
        // The wire format does not change: the secret is still encoded and decoded under its key.
        XCTAssertTrue(out.contains("try container.encode(self.accessToken, forKey: .accessToken)"))
        XCTAssertTrue(out.contains("case accessToken = \"access_token\""))
    }

    func testAnXSecretOtherThanTrueStopsTheGenerator() {
        XCTAssertThrowsError(try models("""
        {"Tokens": {"type": "object", "properties": {"access_token": {"type": "string", "x-secret": "yes"}}}}
        """)) { error in
            XCTAssertTrue(String(describing: error).contains("Tokens.access_token: x-secret must be true"))
        }
    }
}
