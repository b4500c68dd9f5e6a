import Foundation
import XCTest
@testable import ProfirestAPI
import ProfirestTestSupport

/// The request paths whose files `tools/files_touched.py` counts: from a 401 to the refresh and back to the call
/// again (a GET whose token is rejected, against the same GET accepted at once), a POST with a model body, and an
/// outbox delivery (each against its setup alone). A path test does what its twin does plus that path, so a
/// coverage diff of the two shows the files the path runs through.
final class RequestPathTests: XCTestCase {
    private struct Note: Codable, Equatable { var id: String; var text: String }

    private static func client(_ transport: ScriptedTransport) throws -> WiredClient {
        try WiredClient(transport: transport, tokens: ("at_old_0123456789", "rt_1_0123456789", 1800))
    }

    private static let rejectingOldToken = ScriptedTransport { request in
        if request.url.path == "/oauth/token" { return Answers.tokens("at_new_0123456789") }
        if request.bearer != "at_new_0123456789" { return .problem(401, ErrorCode.invalidToken) }
        return request.method == "POST" ? .json(201, ["id": "n1", "text": "hi"]) : .json(200, ["id": "n1", "text": "hi"])
    }

    func testSetupOnly() throws {
        let client = try Self.client(ScriptedTransport { _ in .json(200, [:]) })
        XCTAssertTrue(client.api.isPaired)
    }

    /// The twin of the next test: the same GET, accepted at once.
    func testGetWithAnAcceptedToken() async throws {
        let transport = ScriptedTransport { _ in .json(200, ["id": "n1", "text": "hi"]) }
        let client = try Self.client(transport)
        XCTAssertTrue(client.api.isPaired)
        let note: Note = try await client.api.get("/notes/n1")
        XCTAssertEqual(note, Note(id: "n1", text: "hi"))
        XCTAssertEqual(transport.requests.map(\.url.path), ["/v2/notes/n1"])
    }

    func testGetWhoseTokenWasRejectedRefreshesAndGoesAgain() async throws {
        let transport = Self.rejectingOldToken
        let client = try Self.client(transport)
        XCTAssertTrue(client.api.isPaired)
        let note: Note = try await client.api.get("/notes/n1")
        XCTAssertEqual(note, Note(id: "n1", text: "hi"))
        XCTAssertEqual(transport.requests.map(\.url.path), ["/v2/notes/n1", "/oauth/token", "/v2/notes/n1"])
    }

    func testPostOfAModel() async throws {
        let transport = ScriptedTransport { _ in .json(201, ["id": "n1", "text": "hi"]) }
        let client = try Self.client(transport)
        XCTAssertTrue(client.api.isPaired)
        let note: Note = try await client.api.post("/notes", body: Note(id: "n1", text: "hi"))
        XCTAssertEqual(note, Note(id: "n1", text: "hi"))
        XCTAssertEqual(transport.requests.count, 1)
        XCTAssertNotNil(transport.requests[0].header("Idempotency-Key"))
    }

    private func outboxPath() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("paths-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        return directory.appendingPathComponent("outbox.json").path
    }

    func testOutboxSetupOnly() throws {
        let client = try Self.client(ScriptedTransport { _ in .json(201, ["id": "n1", "text": "hi"]) })
        let outbox = try client.api.outbox(path: try outboxPath())
        XCTAssertEqual(outbox.status.count, 0)
    }

    func testOutboxDelivery() async throws {
        let transport = ScriptedTransport { _ in .json(201, ["id": "n1", "text": "hi"]) }
        let client = try Self.client(transport)
        let outbox = try client.api.outbox(path: try outboxPath())
        XCTAssertEqual(outbox.status.count, 0)
        let outcome = try await outbox.post("/notes", body: ["id": "n1", "text": "hi"])
        XCTAssertEqual(outcome, .delivered(["id": "n1", "text": "hi"]))
        XCTAssertEqual(transport.requests.count, 1)
    }
}
