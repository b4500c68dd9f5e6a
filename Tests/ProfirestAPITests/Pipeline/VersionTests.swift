import Foundation
import XCTest
@testable import ProfirestAPI

/// The version has one source for the release (the VERSION file, which names `make dist`'s archive); the library's
/// own constant, sent in every User-Agent, must say the same, and the changelog must have its entry.
final class VersionTests: XCTestCase {
    private let root = packageRoot

    func testTheLibraryVersionIsTheReleaseVersion() throws {
        let file = try String(contentsOf: root.appendingPathComponent("VERSION"), encoding: .utf8)
        let version = file.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(LibraryVersion.version, version)
        XCTAssertEqual(LibraryVersion.userAgent, "ProfirestAPI-Swift/\(version)")
        let changelog = try String(contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        XCTAssertTrue(changelog.contains("\n## \(version) "), "CHANGELOG.md has no \"## \(version) …\" entry")
    }
}
