import Foundation

/// A small indentation-aware text builder; the generated files' only formatter.
struct SwiftWriter {
    private(set) var text = ""
    private var depth = 0

    init() {}

    /// A writer that has begun a generated file: the "do not edit" header, the linter switched off (the output is
    /// checked by the generator's tests, not by style rules), and `imports`.
    init(fileHeader: String, imports: [String] = []) {
        line(fileHeader)
        line("// swiftlint:disable all")
        for module in imports { line("import \(module)") }
    }

    mutating func line(_ content: String = "") {
        if content.isEmpty {
            text += "\n"
        } else {
            text += String(repeating: "    ", count: depth) + content + "\n"
        }
    }

    mutating func block(_ opening: String, _ body: (inout SwiftWriter) -> Void) {
        line(opening + " {")
        depth += 1
        body(&self)
        depth -= 1
        line("}")
    }

    /// A `switch` whose `case` lines sit at the level of the `switch`, as Swift style has it.
    mutating func switchBlock(_ subject: String, _ cases: [String]) {
        line("switch \(subject) {")
        for item in cases { line(item) }
        line("}")
    }

    /// A `///` doc comment of one paragraph and an optional example; long text is wrapped at 120 columns.
    mutating func doc(_ text: String?, example: String? = nil) {
        doc(DocComment(abstract: text, example: example))
    }

    /// A `///` doc comment: the abstract, the discussion's paragraphs, `- Parameters:`, `- Returns:` and an example,
    /// separated by empty `///` lines; every line stays within 120 columns.
    mutating func doc(_ comment: DocComment) {
        let width = 116 - depth * 4
        var blocks: [[String]] = []
        for paragraph in [comment.abstract].compactMap({ $0 }) + comment.discussion where !paragraph.isEmpty {
            blocks.append(Self.wrap(paragraph, width: width))
        }
        var callouts: [String] = []
        let parameters = comment.parameters.filter { !$0.text.isEmpty }
        if !parameters.isEmpty {
            callouts.append("- Parameters:")
            for parameter in parameters {
                callouts += Self.hanging("  - \(parameter.name): ", parameter.text, indent: "    ", width: width)
            }
        }
        if let returns = comment.returns, !returns.isEmpty {
            callouts += Self.hanging("- Returns: ", returns, indent: "  ", width: width)
        }
        if !callouts.isEmpty { blocks.append(callouts) }
        if let example = comment.example {
            blocks.append(["```swift"] + example.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) + ["```"])
        }
        for (index, block) in blocks.enumerated() {
            if index > 0 { line("///") }
            for text in block { line("/// " + text) }
        }
    }

    /// `text` after `lead` on its first line and after `indent` on the others, wrapped within `width`.
    private static func hanging(_ lead: String, _ text: String, indent: String, width: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ") {
            let prefix = lines.isEmpty ? lead : indent
            if !current.isEmpty, prefix.count + current.count + 1 + word.count > width {
                lines.append(prefix + current)
                current = String(word)
            } else {
                current += current.isEmpty ? String(word) : " " + word
            }
        }
        lines.append((lines.isEmpty ? lead : indent) + current)
        return lines
    }

    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        for hardLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var current = ""
            for word in hardLine.split(separator: " ") {
                if !current.isEmpty, current.count + 1 + word.count > width {
                    lines.append(current)
                    current = String(word)
                } else {
                    current += current.isEmpty ? String(word) : " " + word
                }
            }
            lines.append(current)
        }
        return lines
    }

    /// A Swift string literal.
    static func literal(_ value: String) -> String {
        JSONNode.quote(value)
    }
}

/// What a generated doc comment says. DocC shows the abstract in lists, so it is one sentence: what the symbol is.
struct DocComment: Sendable {
    var abstract: String?
    var discussion: [String] = []
    var parameters: [(name: String, text: String)] = []
    var returns: String?
    var example: String?

    init(abstract: String?, discussion: [String] = [], parameters: [(name: String, text: String)] = [],
         returns: String? = nil, example: String? = nil) {
        self.abstract = abstract
        self.discussion = discussion
        self.parameters = parameters
        self.returns = returns
        self.example = example
    }

    /// The contract's prose: its first sentence the abstract, the rest of it and then `notes` (what the library adds)
    /// the discussion.
    init(prose: String?, notes: [String] = [], example: String? = nil) {
        let (first, rest) = Self.firstSentence(prose ?? "")
        let discussion = ([rest] + notes).filter { !$0.isEmpty }.joined(separator: " ")
        if first.isEmpty {
            self.init(abstract: discussion.isEmpty ? nil : discussion, example: example)
        } else {
            self.init(abstract: first, discussion: discussion.isEmpty ? [] : [discussion], example: example)
        }
    }

    private static let abbreviations: Set<String> = ["e.g.", "i.e.", "etc.", "vs.", "cf."]

    /// `text` split after its first sentence: at the first ". " that does not end an abbreviation such as "e.g.".
    static func firstSentence(_ text: String) -> (first: String, rest: String) {
        let text = text.trimmingCharacters(in: .whitespaces)
        var searchStart = text.startIndex
        while let range = text.range(of: ". ", range: searchStart..<text.endIndex) {
            let head = text[..<range.upperBound].dropLast()
            let lastWord = head.split(separator: " ").last.map { $0.lowercased() } ?? ""
            if !abbreviations.contains(lastWord) {
                return (String(head), String(text[range.upperBound...]).trimmingCharacters(in: .whitespaces))
            }
            searchStart = range.upperBound
        }
        return (text, "")
    }
}
