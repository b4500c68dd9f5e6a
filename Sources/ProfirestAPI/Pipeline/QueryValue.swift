/// One query parameter value: a string, number, boolean or list (sent joined with commas). Empty values and
/// `nil` are left out of the URL, so optional filters can be passed as they are.
///
/// ```swift
/// let query: [String: QueryValue] = ["channel": "pos", "limit": 50, "types": ["order.created", "order.paid"]]
/// ```
public enum QueryValue: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral
{
    /// A text value.
    case string(String)
    /// An integer.
    case int(Int)
    /// A decimal number.
    case double(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// Several values, joined with commas.
    case list([String])
    /// Left out of the URL.
    ///
    /// ```swift
    /// ["cursor": cursor.map(QueryValue.string) ?? .omitted]
    /// ```
    case omitted

    /// A text parameter written as a string literal.
    ///
    /// - Parameter value: the text.
    ///
    /// ```swift
    /// let v: QueryValue = "pos"
    /// ```
    public init(stringLiteral value: String) { self = .string(value) }
    /// A whole-number parameter written as an integer literal.
    ///
    /// - Parameter value: the number.
    ///
    /// ```swift
    /// let v: QueryValue = 50
    /// ```
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A decimal parameter written as a floating-point literal.
    ///
    /// - Parameter value: the number.
    ///
    /// ```swift
    /// let v: QueryValue = 1.5
    /// ```
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A `true`/`false` parameter written as a Boolean literal.
    ///
    /// - Parameter value: `true` or `false`.
    ///
    /// ```swift
    /// let v: QueryValue = true
    /// ```
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A comma-separated list parameter written as an array literal.
    ///
    /// - Parameter elements: the values, sent joined with commas.
    ///
    /// ```swift
    /// let v: QueryValue = ["order.created", "order.paid"]
    /// ```
    public init(arrayLiteral elements: String...) { self = .list(elements) }
    /// A parameter left out of the query, written as `nil`.
    ///
    /// - Parameter nilLiteral: nothing: the literal `nil` carries no value.
    ///
    /// ```swift
    /// let v: QueryValue = nil
    /// ```
    public init(nilLiteral: ()) { self = .omitted }

    /// The encoded value, or nil when it is to be left out.
    func encoded(escape: (String) -> String) -> String? {
        switch self {
        case .string(let s): return s.isEmpty ? nil : escape(s)
        case .int(let i): return String(i)
        case .double(let d): return escape(String(d))
        case .bool(let b): return b ? "true" : "false"
        case .list(let items):
            let kept = items.filter { !$0.isEmpty }
            // Each item is escaped on its own, so a comma inside an item stays distinguishable from the separator.
            return kept.isEmpty ? nil : kept.map(escape).joined(separator: ",")
        case .omitted: return nil
        }
    }
}
