import Foundation
import XCTest

/// The article "Testing your app" keeps its promises: its example is at most 25 lines, and its test — compiled from
/// the article into ArticleSnippets.swift, which XCTest also runs on its own — passes in under 100 ms.
final class TestingYourAppArticleTests: XCTestCase {
    private static let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/ProfirestTesting/ProfirestTesting.docc/TestingYourApp.md")

    func testTheExampleIsAtMost25Lines() throws {
        let text = try String(contentsOf: Self.article, encoding: .utf8)
        let blocks = text.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "\n```")[0] }
        XCTAssertEqual(blocks.count, 1)
        let lines = blocks[0].split(separator: "\n", omittingEmptySubsequences: false).count
        XCTAssertLessThanOrEqual(lines, 25)
        XCTAssertTrue(blocks[0].contains("final class PunchModelTests: XCTestCase"))
    }

    /// The best of three runs, so that a machine busy with other work does not fail it (a run takes a few ms).
    func testTheExampleRunsInUnder100Milliseconds() async throws {
        #if os(Linux) || os(Windows)
        let example = PunchModelTests(name: "testAPunchMadeOfflineIsSentLater", testClosure: { _ in })
        #else
        let example = PunchModelTests()
        #endif
        var runs: [TimeInterval] = []
        for _ in 0..<3 {
            let started = Date()
            try await example.testAPunchMadeOfflineIsSentLater()
            runs.append(Date().timeIntervalSince(started))
        }
        print("TestingYourApp example: " + runs.map { String(format: "%.1f ms", $0 * 1000) }.joined(separator: ", "))
        XCTAssertLessThan(try XCTUnwrap(runs.min()), 0.1)
    }
}
