extension JSONValue: ExpressibleByNilLiteral {
    /// Writes JSON `null` as `nil` in a literal.
    ///
    /// - Parameter nilLiteral: nothing: the literal `nil` carries no value.
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// Writes a JSON boolean as `true` or `false` in a literal.
    ///
    /// - Parameter value: `true` or `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// Writes a JSON integer as an integer literal, kept exact as `.integer`.
    ///
    /// - Parameter value: the number.
    public init(integerLiteral value: Int) { self = .integer(value) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// Writes a JSON number with a fraction as a floating-point literal.
    ///
    /// - Parameter value: the number.
    public init(floatLiteral value: Double) { self = .number(value) }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// Writes a JSON string as a string literal.
    ///
    /// - Parameter value: the text.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// Writes a JSON array as an array literal of any JSON values.
    ///
    /// - Parameter elements: the array's items.
    ///
    /// ```swift
    /// let tags: JSONValue = ["vip", 2, nil]
    /// ```
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// Writes a JSON object as a dictionary literal, so that a body reads like the JSON it sends; a later duplicate
    /// key wins, as in a JSON parser.
    ///
    /// - Parameter elements: the object's members; a later duplicate key wins.
    ///
    /// ```swift
    /// let body: JSONValue = ["name": "Jana Nováková", "loyalty_points": 120]
    /// ```
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object: [String: JSONValue] = [:]
        object.reserveCapacity(elements.count)
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}
