/// Writes `ErrorCode.swift` from the contract's `x-error-catalog`: public constants and the internal catalog data.
struct ErrorCodeWriter {
    struct Entry: Equatable, Sendable {
        var code: String
        var status: Int
        var retryable: Bool
        var libraryOnly: Bool
        var titleCS: String
        var titleEN: String
        var description: String
    }

    let entries: [Entry]

    init(contract: JSONNode) throws {
        guard let catalog = contract["x-error-catalog"]?.array else { throw CodegenError("the contract has no x-error-catalog") }
        entries = try catalog.map { item in
            guard let code = item["code"]?.string, let status = item["status"]?.int, let retryable = item["retryable"]?.bool,
                  let libraryOnly = item["library_only"]?.bool, let cs = item["title"]?["cs"]?.string, let en = item["title"]?["en"]?.string,
                  let description = item["description"]?.string else {
                throw CodegenError("x-error-catalog: an entry lacks code, status, retryable, library_only, title.cs/en or description")
            }
            return Entry(code: code, status: status, retryable: retryable, libraryOnly: libraryOnly, titleCS: cs, titleEN: en, description: description)
        }.sorted { $0.code < $1.code }
    }

    func write(header: String) -> String {
        var out = SwiftWriter(fileHeader: header)
        out.line()
        out.doc("The codes of the error catalog: compare them with ``ProfirestAPIError/code``. Codes never change; new ones may come, so keep a `default:`.",
                example: "if error.code == ErrorCode.staffAmbiguous { chooseEmployee(error.candidates) }")
        out.block("public enum ErrorCode") { out in
            for (index, entry) in entries.enumerated() {
                if index > 0 { out.line() }
                let origin = entry.libraryOnly ? "From the library, never from the server" : "HTTP \(entry.status)"
                // The English title says what happened in a sentence; the description and the status say the rest.
                out.doc(DocComment(abstract: entry.titleEN + ".",
                                   discussion: ["\(entry.description) \(origin)\(entry.retryable ? ", retried" : "")."]))
                out.line("public static let \(Naming.identifier(Naming.camelCase(entry.code))) = \(SwiftWriter.literal(entry.code))")
            }
        }
        out.line()
        out.line("/// The catalog's data for each code: the status it comes with, whether it is retried, its titles.")
        out.block("enum ErrorCatalog") { out in
            out.line("/// One code of the catalog.")
            out.block("struct Entry: Sendable, Hashable") { out in
                out.line("let status: Int")
                out.line("let retryable: Bool")
                out.line("let libraryOnly: Bool")
                out.line("let titleCS: String")
                out.line("let titleEN: String")
            }
            out.line()
            out.line("/// Every code of the contract, by code.")
            out.line("static let entries: [String: Entry] = [")
            for entry in entries {
                out.line("    \(SwiftWriter.literal(entry.code)): Entry(status: \(entry.status), retryable: \(entry.retryable), libraryOnly: \(entry.libraryOnly), titleCS: \(SwiftWriter.literal(entry.titleCS)), titleEN: \(SwiftWriter.literal(entry.titleEN))),")
            }
            out.line("]")
            out.line()
            out.line("/// The entry of a code, or nil for a code newer than this library.")
            out.block("static func entry(for code: String) -> Entry?") { out in
                out.line("entries[code]")
            }
        }
        return out.text
    }
}
