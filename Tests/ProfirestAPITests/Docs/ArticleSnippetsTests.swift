import Foundation
import XCTest

/// The DocC articles' code: compiled by ArticleSnippets.swift (generated from the articles by
/// tools/article_snippets.py); here, that the generated file still holds every block as the articles show it, and
/// that the testing article's unit-test examples pass when run.
final class DocsArticleSnippetsTests: XCTestCase {
    private let catalog = packageRoot.appendingPathComponent("Sources/ProfirestAPI/ProfirestAPI.docc")
    private let generated = packageRoot.appendingPathComponent("Tests/ProfirestAPITests/Docs/ArticleSnippets.swift")

    /// The same check as `make test`'s (`tools/article_snippets.py --check`), looser and without Python: every
    /// ```swift block of every article appears in the generated file, line by line, so an article changed without
    /// `make docs` fails `swift test` too.
    func testEveryArticleBlockIsInTheGeneratedFile() throws {
        let text = try String(contentsOf: generated, encoding: .utf8)
        XCTAssertTrue(text.hasPrefix("// generated — do not edit"), "ArticleSnippets.swift lost its first line")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let articles = try FileManager.default.contentsOfDirectory(at: catalog, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "md" }
        XCTAssertGreaterThan(articles.count, 5)
        var blocks = 0
        for article in articles {
            for (line, block) in try swiftBlocks(of: article) {
                blocks += 1
                XCTAssertTrue(
                    contains(lines, block),
                    "\(article.lastPathComponent):\(line): this block is not in ArticleSnippets.swift; run `make docs`")
            }
        }
        XCTAssertGreaterThan(blocks, 20)
    }

    /// The testing article's in-memory server: a retry waits the server's Retry-After in virtual time and repeats the
    /// Idempotency-Key; the event feed read one step at a time.
    func testTheTestingArticlesExamplesPass() async throws {
        let article = ArticleSnippetContext()
        try await article.testingAgainstTheSandbox3()
        try await article.testingAgainstTheSandbox4()
    }

    /// The ```swift blocks of an article without their leading imports, each with its first line number, trimmed.
    private func swiftBlocks(of article: URL) throws -> [(Int, [String])] {
        let lines = try String(contentsOf: article, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        var blocks: [(Int, [String])] = []
        var index = 0
        while index < lines.count {
            guard lines[index].hasPrefix("```") else {
                index += 1
                continue
            }
            let isSwift = lines[index].dropFirst(3).split(separator: " ").first.map { $0.lowercased() } == "swift"
            let start = index + 1
            index = start
            while index < lines.count, lines[index] != "```" { index += 1 }
            if isSwift {
                var body = Array(lines[start..<min(index, lines.count)])
                while let first = body.first, first.isEmpty || first.hasPrefix("import ") { body.removeFirst() }
                while body.last?.isEmpty == true { body.removeLast() }
                blocks.append((start + 1, body))
            }
            index += 1
        }
        return blocks
    }

    private func contains(_ lines: [String], _ block: [String]) -> Bool {
        guard !block.isEmpty, lines.count >= block.count else { return block.isEmpty }
        for start in 0...(lines.count - block.count) where lines[start] == block[0] {
            if Array(lines[start..<(start + block.count)]) == block { return true }
        }
        return false
    }
}
