/// Codes and titles for errors without a problem+json body to read them from, taken from the generated catalog.
enum StatusFallback {
    /// The code an error status means when the body says nothing; `http_error` where a status is ambiguous
    /// (a 403 or 409 without a code could be any of several catalog codes).
    static func code(forStatus status: Int) -> String {
        switch status {
        case 400: return ErrorCode.badRequest
        case 401: return ErrorCode.invalidToken
        case 404: return ErrorCode.notFound
        case 405: return ErrorCode.methodNotAllowed
        case 406: return ErrorCode.notAcceptable
        case 412: return ErrorCode.preconditionFailed
        case 413: return ErrorCode.payloadTooLarge
        case 415: return ErrorCode.unsupportedMediaType
        case 428: return ErrorCode.preconditionRequired
        case 429: return ErrorCode.rateLimited
        case 500: return ErrorCode.internalError
        case 502: return ErrorCode.badGateway
        case 503: return ErrorCode.serviceUnavailable
        case 504: return ErrorCode.gatewayTimeout
        default: return ErrorCode.httpError
        }
    }

    /// The catalog title in the client's language: English for `en…`, Czech otherwise (also with no language,
    /// which is what the server does without Accept-Language).
    static func title(_ code: String, language: String?) -> String {
        guard let entry = ErrorCatalog.entry(for: code) else { return code }
        return language?.lowercased().hasPrefix("en") == true ? entry.titleEN : entry.titleCS
    }
}
