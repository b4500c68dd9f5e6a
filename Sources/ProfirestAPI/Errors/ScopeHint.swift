import Foundation

/// Adds to a `403 insufficient_scope` the scope the call needs, from the contract's operations, so a new app learns
/// what to ask for in `pair(scope:)` from the first refusal rather than by trial.
enum ScopeHint {
    /// `error` with a sentence naming the missing scopes appended to its detail; unchanged for any other error, or
    /// when the call is no operation of the contract.
    static func annotated(_ error: ProfirestAPIError, method: String, url: URL) -> ProfirestAPIError {
        guard error.code == ErrorCode.insufficientScope, let scopes = scopes(method: method, url: url), !scopes.isEmpty else {
            return error
        }
        var annotated = error
        let names = scopes.map { "`\($0)`" }.joined(separator: " and ")
        let hint = "This call needs the scope \(names): add it to pair(scope:) (or to the consent's scope) and pair again."
        annotated.detail = [error.detail, hint].compactMap { $0 }.joined(separator: " ")
        return annotated
    }

    /// The scopes of the contract's operation that `method` and `url` (an API URL under `/v2`) call.
    static func scopes(method: String, url: URL) -> [String]? {
        guard let range = url.path.range(of: "/v2/") else { return nil }
        let segments = url.path[range.upperBound...].split(separator: "/")
        // The matching template with the most literal segments: `…/punches/batch` before `…/punches/{id}`.
        var best: (literals: Int, scopes: [String])?
        for operation in Operations.all where operation.method == method && !operation.isRoot {
            let template = operation.path.split(separator: "/")
            guard template.count == segments.count,
                zip(template, segments).allSatisfy({ pattern, segment in pattern.hasPrefix("{") || pattern == segment })
            else { continue }
            let literals = template.filter { !$0.hasPrefix("{") }.count
            if literals > best?.literals ?? -1 { best = (literals, operation.scopes) }
        }
        return best?.scopes
    }
}
