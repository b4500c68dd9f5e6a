/// The contract as the generator reads it, with the one `$ref` resolver that every part of the generator uses.
struct Contract: Sendable {
    let root: JSONNode

    init(_ root: JSONNode) {
        self.root = root
    }

    /// `components/schemas`, by the contract's name.
    func schemas() throws -> [String: JSONNode] {
        guard let schemas = root["components"]?["schemas"]?.object else {
            throw CodegenError("the contract has no components/schemas")
        }
        return schemas
    }

    /// `node` itself, or what its `$ref` names: `#/components/<section>/<name>` (a schema, a parameter).
    /// `context` names where the reference sits, for the error.
    func resolve(_ node: JSONNode, context: String) throws -> JSONNode {
        guard let target = node["$ref"]?.string else { return node }
        let parts = target.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, parts[0] == "#", parts[1] == "components",
              let resolved = root["components"]?[parts[2]]?[parts[3]] else {
            throw CodegenError("\(context): unresolved \(target)")
        }
        return resolved
    }

    /// The contract's name of a `$ref` target: `#/components/schemas/Order` → `Order`.
    static func refName(_ target: String) -> String {
        String(target.split(separator: "/").last ?? "")
    }

    /// The Swift type a `$ref` to a schema becomes: `#/components/schemas/TimeInterval` → `ProfirestTimeInterval`.
    static func typeName(ofRef target: String) -> String {
        Naming.typeName(refName(target))
    }
}
