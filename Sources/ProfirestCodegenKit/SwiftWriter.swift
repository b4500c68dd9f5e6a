/// A small indentation-aware text builder; the generated files' only formatter.
struct SwiftWriter {
    private(set) var text = ""
    private var depth = 0

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

    /// A `///` doc comment; long contract prose is wrapped at 120 columns.
    mutating func doc(_ text: String?, example: String? = nil) {
        var paragraphs: [String] = []
        if let text, !text.isEmpty { paragraphs.append(text) }
        for (index, paragraph) in paragraphs.enumerated() {
            if index > 0 { line("///") }
            for wrapped in Self.wrap(paragraph, width: 116 - depth * 4) { line("/// " + wrapped) }
        }
        if let example {
            if !paragraphs.isEmpty { line("///") }
            line("/// ```swift")
            for exampleLine in example.split(separator: "\n", omittingEmptySubsequences: false) { line("/// " + exampleLine) }
            line("/// ```")
        }
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
