import Foundation
import XCTest
@testable import ProfirestCodegenKit

/// Each schema construct the contract may use, on a small contract of its own.
final class ConstructTests: XCTestCase {
    private func generate(schemas: String, paths: String = "{}") throws -> [String: String] {
        let contract = """
        {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": \(paths),
         "x-error-catalog": [{"code": "staff_ambiguous", "status": 409, "retryable": false, "library_only": false,
                              "title": {"cs": "a", "en": "b"}, "description": "d"}],
         "components": {"schemas": \(schemas)}}
        """
        return try Generator(contract: Data(contract.utf8)).files()
    }

    private func models(_ schemas: String) throws -> String {
        try XCTUnwrap(generate(schemas: schemas)["Models.swift"])
    }

    func testRequiredOptionalNullableAndTriStateMembers() throws {
        let out = try models("""
        {"Thing": {"type": "object", "required": ["a", "b"], "properties": {
            "a": {"type": "string"}, "b": {"type": ["string", "null"]}, "c": {"type": "integer"},
            "d": {"type": ["string", "null"]}, "e": {"type": "string", "format": "date-time"}}}}
        """)
        XCTAssertTrue(out.contains("public var a: String\n"))
        XCTAssertTrue(out.contains("public var b: String?\n"))
        XCTAssertTrue(out.contains("public var c: Int?\n"))
        XCTAssertTrue(out.contains("public var d: Nullable<String>?\n"))
        XCTAssertTrue(out.contains("public var e: Date?\n"))
        XCTAssertTrue(out.contains("public init(a: String, b: String? = nil, c: Int? = nil, d: Nullable<String>? = nil, e: Date? = nil)"))
        // required + nullable: the key must be there; optional: absent is fine; tri-state keeps null apart.
        XCTAssertTrue(out.contains("self.b = try container.decodeRequiredNull(String.self, forKey: .b)"))
        XCTAssertTrue(out.contains("self.c = try container.decodeIfPresent(Int.self, forKey: .c)"))
        XCTAssertTrue(out.contains("self.d = try container.decodeNullable(String.self, forKey: .d)"))
        XCTAssertTrue(out.contains("self.e = try container.decodeRFC3339DateIfPresent(forKey: .e)"))
        XCTAssertTrue(out.contains("try container.encode(self.b, forKey: .b)"), "required nullable is always sent")
        XCTAssertTrue(out.contains("try container.encodeIfPresent(self.c, forKey: .c)"))
    }

    func testSnakeCaseMembersKeepTheirWireKeys() throws {
        let out = try models("""
        {"Thing": {"type": "object", "properties": {"employee_id": {"type": "string"}, "default": {"type": "boolean"}}}}
        """)
        XCTAssertTrue(out.contains("public var employeeId: String?"))
        XCTAssertTrue(out.contains("case employeeId = \"employee_id\""))
        XCTAssertTrue(out.contains("public var `default`: Bool?"), "keywords are escaped")
    }

    func testEnumsAreOpenAndMembersStayStrings() throws {
        let out = try models("""
        {"Kind": {"type": "string", "enum": ["clock_in", "break_end"]},
         "Punch": {"type": "object", "required": ["type"], "properties": {"type": {"$ref": "#/components/schemas/Kind"}}}}
        """)
        XCTAssertTrue(out.contains("public struct Kind: ProfirestOpenEnum"))
        XCTAssertTrue(out.contains("public static let clockIn = Kind(rawValue: \"clock_in\")"))
        XCTAssertTrue(out.contains("public static let knownValues: [Kind] = [.clockIn, .breakEnd]"))
        XCTAssertTrue(out.contains("public var type: String\n"), "a String member takes any value, also one added later")
        XCTAssertTrue(out.contains("public init(type: Kind) {\n        self.init(type: type.rawValue)"), "constants work at the call site")
    }

    func testInlineEnumsMustBeNamed() throws {
        XCTAssertThrowsError(try generate(schemas: """
        {"Thing": {"type": "object", "properties": {"k": {"type": "string", "enum": ["a", "b"]}}}}
        """)) { error in
            XCTAssertTrue("\(error)".contains("Thing.k"))
        }
    }

    func testOneOfWithDiscriminatorKeepsUnknownShapes() throws {
        let out = try models("""
        {"A": {"type": "object", "required": ["type"], "properties": {"type": {"type": "string", "enum": ["a"]}}},
         "DineIn": {"type": "object", "required": ["type"], "properties": {"type": {"type": "string", "enum": ["dine_in"]}}},
         "Either": {"oneOf": [{"$ref": "#/components/schemas/A"}, {"$ref": "#/components/schemas/DineIn"}],
                    "discriminator": {"propertyName": "type", "mapping": {"a": "#/components/schemas/A", "dine_in": "#/components/schemas/DineIn"}}}}
        """)
        XCTAssertTrue(out.contains("public enum Either: Codable, Hashable, Sendable"))
        XCTAssertTrue(out.contains("case a(A)"))
        XCTAssertTrue(out.contains("case dineIn(DineIn)"))
        XCTAssertTrue(out.contains("case unknown(JSONValue)"))
        XCTAssertTrue(out.contains("case \"dine_in\": self = .dineIn(try DineIn(from: decoder))"))
    }

    func testAllOfIsFlattenedAndNullableRefsAreOptional() throws {
        let out = try models("""
        {"Base": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}},
         "Other": {"type": "object", "properties": {"x": {"type": "integer"}}},
         "Full": {"allOf": [{"$ref": "#/components/schemas/Base"}, {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "other": {"oneOf": [{"$ref": "#/components/schemas/Other"}, {"type": "null"}]}}}]}}
        """)
        XCTAssertTrue(out.contains("public init(id: String, name: String, other: Nullable<Other>? = nil)"))
    }

    func testAdditionalPropertiesBecomeDictionaries() throws {
        let out = try models("""
        {"Thing": {"type": "object", "required": ["names", "data"], "properties": {
            "names": {"type": "object", "additionalProperties": {"type": "string"}},
            "data": {"type": "object", "additionalProperties": true}, "list": {"type": "array", "items": {"type": "number"}}}}}
        """)
        XCTAssertTrue(out.contains("public var names: [String: String]\n"))
        XCTAssertTrue(out.contains("public var data: [String: JSONValue]\n"))
        XCTAssertTrue(out.contains("public var list: [Double]?\n"))
    }

    func testClashingNamesAreRenamedAndPagesConform() throws {
        let out = try models("""
        {"TimeInterval": {"type": "object", "properties": {"from": {"type": "string"}}},
         "Holder": {"type": "object", "required": ["span"], "properties": {"span": {"$ref": "#/components/schemas/TimeInterval"}}},
         "HolderPage": {"type": "object", "required": ["data"], "properties": {
            "data": {"type": "array", "items": {"$ref": "#/components/schemas/Holder"}}, "next_cursor": {"type": "string"}}}}
        """)
        XCTAssertTrue(out.contains("public struct ProfirestTimeInterval: Codable"))
        XCTAssertTrue(out.contains("public var span: ProfirestTimeInterval\n"))
        XCTAssertTrue(out.contains("\"TimeInterval\": ProfirestTimeInterval.self"), "the registry keeps the contract's name")
        XCTAssertTrue(out.contains("public struct HolderPage: Codable, Hashable, Sendable, ProfirestPage"))
        XCTAssertTrue(out.contains("public typealias Item = Holder"))
    }

    func testErrorCodesAndOperations() throws {
        let files = try generate(schemas: #"{"Thing": {"type": "object", "properties": {"name": {"type": "string"}}}}"#, paths: """
        {"/v2/restaurants/{restaurant_id}/things": {"post": {"operationId": "createThing", "tags": ["Things"],
            "parameters": [{"name": "restaurant_id", "in": "path", "required": true, "schema": {"type": "string"}},
                           {"name": "Idempotency-Key", "in": "header", "schema": {"type": "string"}}],
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
            "responses": {"201": {"description": "x", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
                          "default": {"description": "e"}}, "security": [{"oauth2": ["things:write"]}]}}}
        """)
        let codes = try XCTUnwrap(files["ErrorCode.swift"])
        XCTAssertTrue(codes.contains("public static let staffAmbiguous = \"staff_ambiguous\""))
        XCTAssertTrue(codes.contains("\"staff_ambiguous\": Entry(status: 409, retryable: false, libraryOnly: false"))
        let operations = try XCTUnwrap(files["Operations.swift"])
        XCTAssertTrue(operations.contains("    static let createThing = OperationDescriptor("))
        XCTAssertFalse(operations.contains("public "), "the descriptors are internal: an app calls the typed operations")
        XCTAssertTrue(operations.contains("path: \"/restaurants/{restaurant_id}/things\", isRoot: false"))
        XCTAssertTrue(operations.contains("headerParameters: [\"Idempotency-Key\"]"))
        XCTAssertTrue(operations.contains("responses: [201: \"Thing\"], scopes: [\"things:write\"]"))
    }

    func testAnUnresolvedReferenceStopsTheGeneratorWhereverItSits() throws {
        XCTAssertThrowsError(try generate(schemas: """
        {"Holder": {"type": "object", "properties": {"span": {"$ref": "#/components/schemas/Missing"}}}}
        """)) { error in
            XCTAssertTrue("\(error)".contains("Holder.span: unresolved #/components/schemas/Missing"), "\(error)")
        }
        XCTAssertThrowsError(try generate(schemas: "{}", paths: """
        {"/v2/things": {"get": {"operationId": "listThings", "tags": ["Things"],
            "parameters": [{"$ref": "#/components/parameters/Missing"}], "responses": {"204": {"description": "x"}}}}}
        """)) { error in
            XCTAssertTrue("\(error)".contains("listThings: unresolved #/components/parameters/Missing"), "\(error)")
        }
    }
}

/// Generated doc comments say what the contract says: the first sentence is the abstract DocC lists, the rest follows.
final class DocumentationTests: XCTestCase {
    private func generate(schemas: String, paths: String = "{}") throws -> [String: String] {
        let contract = """
        {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": \(paths),
         "x-error-catalog": [{"code": "staff_ambiguous", "status": 409, "retryable": false, "library_only": false,
                              "title": {"cs": "a", "en": "Several employees share this PIN"}, "description": "Choose one. Send again."}],
         "components": {"schemas": \(schemas)}}
        """
        return try Generator(contract: Data(contract.utf8)).files()
    }

    func testMembersCarryTheContractsDescriptionsAndRefsTheirSchemas() throws {
        let out = try XCTUnwrap(generate(schemas: """
        {"Kind": {"type": "string", "enum": ["a"], "description": "The kind of thing. New ones may come."},
         "Thing": {"type": "object", "description": "A thing, e.g. a chair. Or a table.", "required": ["kind", "note"], "properties": {
            "kind": {"$ref": "#/components/schemas/Kind"},
            "note": {"type": ["string", "null"], "description": "Why it is here, e.g. a gift. Shown to guests."},
            "bare": {"type": "string"}}}}
        """)["Models.swift"])
        XCTAssertTrue(out.contains("/// A thing, e.g. a chair.\n///\n/// Or a table.\n///\n/// ```swift"), "an abbreviation ends no sentence")
        XCTAssertTrue(out.contains("""
            /// The kind of thing.
            ///
            /// New ones may come. Known values: ``Kind``.
            public var kind: String
        """), "a member that is a $ref has its schema's description")
        XCTAssertTrue(out.contains("""
            /// Why it is here, e.g. a gift.
            ///
            /// Shown to guests. Always sent; `nil` is JSON null.
            public var note: String?
        """))
        XCTAssertTrue(out.contains("    public var bare: String?\n"))
        XCTAssertFalse(out.contains("member."), "no text made up where the contract says nothing")
    }

    func testErrorCodesLeadWithTheirTitle() throws {
        let codes = try XCTUnwrap(generate(schemas: "{}")["ErrorCode.swift"])
        XCTAssertTrue(codes.contains("""
            /// Several employees share this PIN.
            ///
            /// Choose one. Send again. HTTP 409.
            public static let staffAmbiguous
        """))
    }

    func testTypedOperationsDocumentTheirParametersAndResult() throws {
        let typed = try XCTUnwrap(generate(schemas: """
        {"Thing": {"type": "object", "description": "A thing.", "properties": {}},
         "ThingCreate": {"type": "object", "description": "A new thing.", "properties": {}}}
        """, paths: """
        {"/v2/things/{thing_id}": {"post": {"operationId": "createThing", "tags": ["Things"], "summary": "Make a thing",
            "description": "Once by id.",
            "parameters": [{"name": "thing_id", "in": "path", "required": true, "schema": {"type": "string"}, "description": "The thing."},
                           {"name": "size", "in": "query", "schema": {"type": "integer"}, "description": "How big."}],
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ThingCreate"}}}},
            "responses": {"201": {"description": "Made.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}},
            "security": [{"oauth2": ["things:write"]}], "x-staff-session": "required"}}}
        """)["TypedOperations.swift"])
        XCTAssertTrue(typed.contains("""
            /// Make a thing.
            ///
            /// Once by id.
            ///
            /// Sends `POST /v2/things/{thing_id}`; needs the scope `things:write` and a signed-in employee (`signInStaff`).
            ///
            /// - Parameters:
            ///   - thingID: The thing.
            ///   - body: A new thing.
            ///   - size: How big.
            ///   - options:
        """), typed)
        XCTAssertTrue(typed.contains("    /// - Returns: A thing.\n"))
    }

    func testLongTextWrapsWithinTheLineAndUnderItsItem() {
        var out = SwiftWriter()
        let long = Array(repeating: "word", count: 40).joined(separator: " ")
        out.doc(DocComment(abstract: "Short.", parameters: [("name", long)], returns: long))
        let lines = out.text.split(separator: "\n")
        XCTAssertTrue(lines.allSatisfy { $0.count <= 120 })
        XCTAssertTrue(lines.contains { $0.hasPrefix("///     word") }, "a parameter's next lines hang under it")
        XCTAssertTrue(lines.contains { $0.hasPrefix("///   word") }, "so do the result's")
    }
}

/// The typed layer's names and what it leaves to the client's own methods.
final class TypedOperationNamingTests: XCTestCase {
    func testMethodNamesDropTheTag() {
        XCTAssertEqual(TypedOperationsWriter.methodName("createAttendancePunch", tag: "Attendance"), "createPunch")
        XCTAssertEqual(TypedOperationsWriter.methodName("listOrders", tag: "Orders"), "list")
        XCTAssertEqual(TypedOperationsWriter.methodName("changeDeliveryStatus", tag: "Deliveries"), "changeStatus")
        XCTAssertEqual(TypedOperationsWriter.methodName("createQuote", tag: "Orders"), "createQuote")
        XCTAssertEqual(TypedOperationsWriter.label("restaurant_id"), "restaurantID")
        XCTAssertEqual(TypedOperationsWriter.label("cursor"), "cursor")
        XCTAssertEqual(TypedOperationsWriter.accessor("Staff"), "employees", "api.staff is the signed-in employee")
    }

    func testOperationsServedByClientMethodsGetNoTypedMethod() throws {
        let files = try Generator(contract: Data(contentsOf: RepositoryPaths.contract)).files()
        let typed = try XCTUnwrap(files["TypedOperations.swift"])
        XCTAssertTrue(typed.contains("public func createPunch(restaurantID: String, _ body: AttendancePunchCreate"))
        XCTAssertFalse(typed.contains("createSession("), "signInStaff keeps the staff token; a typed twin would not")
        XCTAssertFalse(typed.contains("/oauth/"))
        XCTAssertFalse(typed.contains("events/stream"))
    }
}
