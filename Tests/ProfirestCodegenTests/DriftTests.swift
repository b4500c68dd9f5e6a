import Foundation
import XCTest
@testable import ProfirestCodegenKit

/// The generated files are exactly what the contract gives: a hand edit or a forgotten `make generate` fails here.
final class DriftTests: XCTestCase {
    func testGeneratedFilesMatchTheContract() throws {
        let generator = try Generator(contract: Data(contentsOf: RepositoryPaths.contract))
        XCTAssertEqual(try generator.drift(in: RepositoryPaths.generated), [], "run `make generate` and commit the result")
    }

    /// The testing kit's fixtures are the contract's examples: a hand edit or a changed example without
    /// `make generate` fails here (and `make check-generated`).
    func testTestingKitFixturesMatchTheContract() throws {
        let generator = try Generator(contract: Data(contentsOf: RepositoryPaths.contract))
        XCTAssertEqual(
            try generator.testingKitDrift(in: RepositoryPaths.testingKitGenerated), [],
            "run `make generate` and commit the result")
        let files = try generator.testingKitFiles()
        XCTAssertEqual(Set(files.keys), ["ContractFixtures.swift"])
        let text = try XCTUnwrap(files["ContractFixtures.swift"])
        XCTAssertTrue(text.hasPrefix(Generator.header + "\n"))
        XCTAssertTrue(text.contains("public static var createAttendancePunch: AttendancePunch {"))
        XCTAssertTrue(text.contains(#"operationID: "createAttendancePunch", method: "POST""#))
    }

    func testTestingKitDriftReportsAnEditedFixtureFile() throws {
        let generator = try Generator(contract: Data(contentsOf: RepositoryPaths.contract))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codegen-kit-drift-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try generator.writeTestingKit(to: directory)
        XCTAssertEqual(try generator.testingKitDrift(in: directory), [])
        try Data("// edited\n".utf8).write(to: directory.appendingPathComponent("ContractFixtures.swift"))
        XCTAssertEqual(try generator.testingKitDrift(in: directory), ["ContractFixtures.swift"])
    }

    func testOutputIsDeterministic() throws {
        let data = try Data(contentsOf: RepositoryPaths.contract)
        let first = try Generator(contract: data).files()
        let second = try Generator(contract: data).files()
        XCTAssertEqual(first, second)
        XCTAssertEqual(Set(first.keys), ["Models.swift", "ErrorCode.swift", "Operations.swift", "TypedOperations.swift"])
    }

    func testEveryFileStartsWithTheDoNotEditLine() throws {
        for (name, content) in try Generator(contract: Data(contentsOf: RepositoryPaths.contract)).files() {
            XCTAssertTrue(content.hasPrefix(Generator.header + "\n"), name)
            XCTAssertTrue(Generator.header.contains("do not edit"))
        }
    }

    func testDriftReportsChangedMissingAndExtraFiles() throws {
        let generator = try Generator(contract: Data(contentsOf: RepositoryPaths.contract))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codegen-drift-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try generator.write(to: directory)
        XCTAssertEqual(try generator.drift(in: directory), [])

        try Data("// edited\n".utf8).write(to: directory.appendingPathComponent("ErrorCode.swift"))
        try FileManager.default.removeItem(at: directory.appendingPathComponent("Operations.swift"))
        try Data("// stale\n".utf8).write(to: directory.appendingPathComponent("Old.swift"))
        XCTAssertEqual(try generator.drift(in: directory), ["ErrorCode.swift", "Operations.swift", "Old.swift"])

        try generator.write(to: directory)
        XCTAssertEqual(try generator.drift(in: directory), [], "generate removes stale files and restores the others")
    }
}
