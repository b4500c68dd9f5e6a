/// How contract names become Swift names. One place, so a rename is one edit.
enum Naming {
    /// Schema names that would shadow a Foundation or Swift type inside the library itself.
    static let typeRenames: [String: String] = [
        "TimeInterval": "ProfirestTimeInterval",
        "Data": "ProfirestData",
        "Date": "ProfirestDate",
        "URL": "ProfirestURL",
        "Error": "ProfirestError",
    ]

    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "protocol", "public", "rethrows", "static", "struct",
        "subscript", "typealias", "var", "break", "case", "continue", "default", "defer", "do", "else",
        "fallthrough", "for", "guard", "if", "in", "repeat", "return", "switch", "where", "while", "as", "Any",
        "catch", "false", "is", "nil", "super", "self", "Self", "throw", "throws", "true", "try", "Type",
    ]

    static func typeName(_ schemaName: String) -> String {
        typeRenames[schemaName] ?? schemaName
    }

    /// `restaurant_id` → `restaurantId`, `Idempotency-Key` → `idempotencyKey`, `order.created` → `orderCreated`.
    static func camelCase(_ wire: String) -> String {
        let words = wire.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init)
        guard let first = words.first else { return "_" }
        var name = lowerFirst(first)
        for word in words.dropFirst() {
            name += word.prefix(1).uppercased() + word.dropFirst()
        }
        if let firstChar = name.first, firstChar.isNumber { name = "_" + name }
        return name
    }

    static func pascalCase(_ wire: String) -> String {
        let camel = camelCase(wire)
        return camel.prefix(1).uppercased() + camel.dropFirst()
    }

    /// A name safe to declare: keywords get backticks.
    static func identifier(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    private static func lowerFirst(_ word: String) -> String {
        // "HTTPStatus" → "httpStatus", "Idempotency" → "idempotency"
        let chars = Array(word)
        var upperRun = 0
        while upperRun < chars.count, chars[upperRun].isUppercase { upperRun += 1 }
        if upperRun == 0 { return word }
        if upperRun == 1 || upperRun == chars.count { return word.prefix(upperRun).lowercased() + word.dropFirst(upperRun) }
        return word.prefix(upperRun - 1).lowercased() + word.dropFirst(upperRun - 1)
    }
}
