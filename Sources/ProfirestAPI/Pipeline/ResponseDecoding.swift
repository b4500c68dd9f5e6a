import Foundation

/// Turns a successful response into the caller's type: `Data` gets the bytes, `JSONValue` any JSON, an optional
/// `nil` for an empty body (204), a model is decoded — and a body that does not fit becomes `invalid_response`
/// naming the type and the JSON path, instead of a bare `DecodingError`.
enum ResponseDecoding {
    static func decode<T: Decodable>(
        _ type: T.Type, from response: APIResponse, errors: @autoclosure () -> ErrorFactory
    ) throws -> T {
        if T.self == Data.self { return response.data as! T }
        if T.self == Data?.self { return (response.data.isEmpty ? nil : response.data) as Data? as! T }
        if response.data.isEmpty {
            if let none = (T.self as? OptionalMarker.Type)?.emptyValue { return none as! T }
            if T.self == JSONValue.self { return JSONValue.null as! T }
            throw errors().make(
                ErrorCode.invalidResponse, status: response.status,
                detail: "expected \(T.self) but the response (HTTP \(response.status)) has no body",
                requestID: response.header("Profirest-Request-Id"))
        }
        do {
            return try JSONCoding.decoder.decode(T.self, from: response.data)
        } catch let error as DecodingError {
            var reason = describe(error)
            // A number no Swift number holds fails the whole document: set aside, it may be one the model skips.
            switch OversizedNumbers.retry(T.self, from: response.data) {
            case .success(let value)?: return value
            case .failure(let second)?:
                reason = OversizedNumbers.explain(second, in: response.data).map { "at \(jsonPath($0.path)): \($0.reason)" }
                    ?? describe(second)
            case nil: break
            }
            let type = response.header("Content-Type") ?? "no content type"
            throw errors().make(
                ErrorCode.invalidResponse, status: response.status,
                detail: "the response (HTTP \(response.status), \(type)) is not \(T.self): \(reason)",
                requestID: response.header("Profirest-Request-Id"))
        }
    }

    /// `at $.items[0].price: expected Int, found a string`-style text; never the value itself (it might be secret).
    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(let type, let context):
            return "at \(jsonPath(context.codingPath)): expected \(type) (\(context.debugDescription))"
        case .valueNotFound(let type, let context):
            return "at \(jsonPath(context.codingPath)): expected \(type), found null"
        case .keyNotFound(let key, let context):
            return "at \(jsonPath(context.codingPath + [key])): the member is missing"
        case .dataCorrupted(let context):
            return "at \(jsonPath(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    static func jsonPath(_ path: [CodingKey]) -> String {
        var text = "$"
        for key in path {
            if let index = key.intValue, key.stringValue.hasPrefix("Index") || key.stringValue == "\(index)" {
                text += "[\(index)]"
            } else {
                text += "." + key.stringValue
            }
        }
        return text
    }
}

/// Lets the decoder answer `nil` for an empty body when the caller asked for an optional.
protocol OptionalMarker {
    static var emptyValue: Any { get }
}

extension Optional: OptionalMarker {
    static var emptyValue: Any { Self.none as Any }
}
