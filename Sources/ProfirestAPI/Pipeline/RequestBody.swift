import Foundation

/// A request body: JSON from a dictionary or array literal, or raw bytes or text with their content type.
/// (Any `Encodable` model can be passed directly as `body:` as well.)
///
/// ```swift
/// try await api.post("/restaurants/\(rid)/backups", body: .data(zipData, contentType: "application/zip"))
/// ```
public struct RequestBody: Sendable, Hashable, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
    enum Content: Sendable, Hashable {
        case json(JSONValue)
        case raw(Data, contentType: String)
    }

    let content: Content

    /// A JSON body.
    ///
    /// - Parameter value: the JSON to send.
    /// - Returns: a body sent as `application/json`.
    ///
    /// ```swift
    /// body: .json(value)
    /// ```
    public static func json(_ value: JSONValue) -> RequestBody { RequestBody(content: .json(value)) }

    /// Raw bytes sent as they are.
    ///
    /// - Parameters:
    ///   - bytes: the bytes, sent as they are.
    ///   - contentType: their media type, such as `application/zip`.
    /// - Returns: a body of those bytes with that content type.
    ///
    /// ```swift
    /// body: .data(zipData, contentType: "application/zip")
    /// ```
    public static func data(_ bytes: Data, contentType: String) -> RequestBody {
        RequestBody(content: .raw(bytes, contentType: contentType))
    }

    /// Text sent as UTF-8.
    ///
    /// - Parameters:
    ///   - text: the text, sent as UTF-8.
    ///   - contentType: its media type, `text/plain; charset=utf-8` by default.
    /// - Returns: a body of that text with that content type.
    ///
    /// ```swift
    /// body: .text("note", contentType: "text/plain; charset=utf-8")
    /// ```
    public static func text(_ text: String, contentType: String = "text/plain; charset=utf-8") -> RequestBody {
        RequestBody(content: .raw(Data(text.utf8), contentType: contentType))
    }

    /// A JSON object body written as a dictionary literal.
    ///
    /// - Parameter elements: the object's members, sent as JSON.
    ///
    /// ```swift
    /// body: ["name": "Jana Nováková"]
    /// ```
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object: [String: JSONValue] = [:]
        for (key, value) in elements { object[key] = value }
        content = .json(.object(object))
    }

    /// A JSON array body written as an array literal.
    ///
    /// - Parameter elements: the array's items, sent as JSON.
    ///
    /// ```swift
    /// body: [["id": "p1"], ["id": "p2"]]
    /// ```
    public init(arrayLiteral elements: JSONValue...) { content = .json(.array(elements)) }

    init(content: Content) { self.content = content }

    /// The bytes and content type, encoded once per call so every retry sends exactly the same body.
    func encoded() throws -> (data: Data, contentType: String) {
        switch content {
        case .json(let value): return (try JSONCoding.encode(value), "application/json")
        case .raw(let data, let type): return (data, type)
        }
    }
}

extension RequestBody {
    /// A model as a JSON body, encoded once with sorted keys (the same model, the same bytes).
    static func model<B: Encodable>(_ body: B) throws -> RequestBody {
        if B.self == Data.self {
            throw ProfirestUsageError(
                "pass raw bytes as body: .data(bytes, contentType: \"application/zip\") so they are not sent as a base64 JSON string")
        }
        if let body = body as? RequestBody { return body }
        do {
            return .data(try JSONCoding.encode(body), contentType: "application/json")
        } catch {
            throw ProfirestUsageError("the body of type \(B.self) cannot be encoded as JSON: \(error)")
        }
    }
}
