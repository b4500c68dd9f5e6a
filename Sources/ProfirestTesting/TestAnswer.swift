import Foundation
import ProfirestAPI

/// What ``ProfirestTestServer`` does with one request instead of its usual answer: a body of the test's choosing, a
/// problem of the error catalog, or a fault — the connection dropped, an answer late on the virtual clock.
///
/// Script answers per route with ``ProfirestTestServer/answer(_:_:with:)`` (the next requests, once each) or
/// ``ProfirestTestServer/answerAlways(_:_:with:)``.
///
/// ```swift
/// server.answer("POST", "/v2/restaurants/{restaurant_id}/attendance/punches",
///               with: .unavailable(retryAfter: 7), .drop, .fixture)
/// ```
public indirect enum TestAnswer: Sendable {
    /// The server's own answer: the contract's example for the route (``Fixtures``), or the behaviour the kit has
    /// for it (the token endpoint, punches, the event feed).
    case fixture
    /// Answers `status` with this JSON body.
    case json(status: Int, JSONValue)
    /// Answers with exactly this response.
    case response(APIResponse)
    /// Answers an `application/problem+json` of the error catalog: `code` with `status`, the members of `extra`
    /// (such as `candidates`), and `Retry-After` when `retryAfter` is given.
    case problem(status: Int, code: String, extra: [String: JSONValue] = [:], retryAfter: Int? = nil)
    /// Drops the connection without an answer: the request throws `URLError(.networkConnectionLost)`.
    case drop
    /// Waits `seconds` on the server's virtual clock (the test advances it), then answers as `then` does.
    case delay(TimeInterval, then: TestAnswer)

    /// `503 service_unavailable` with `Retry-After: seconds`: the client waits that long (on the virtual clock)
    /// and sends again.
    ///
    /// - Parameter seconds: the Retry-After, in seconds.
    /// - Returns: the answer.
    public static func unavailable(retryAfter seconds: Int) -> TestAnswer {
        .problem(status: 503, code: "service_unavailable", retryAfter: seconds)
    }

    /// `401 invalid_token`, as for an access token the server no longer takes: the client refreshes its tokens
    /// (the kit answers the token endpoint) and sends again once.
    public static var unauthorized: TestAnswer { .problem(status: 401, code: "invalid_token") }

    /// `409 staff_ambiguous`: several people share the PIN; `candidates` (id, name) are the people to choose from,
    /// as `ProfirestAPIError.candidates`.
    ///
    /// - Parameter candidates: the people who share the PIN, as (employee id, name).
    /// - Returns: the answer.
    public static func staffAmbiguous(_ candidates: [(id: String, name: String)]) -> TestAnswer {
        let people: [JSONValue] = candidates.map { .object(["id": .string($0.id), "name": .string($0.name)]) }
        return .problem(status: 409, code: "staff_ambiguous", extra: ["candidates": .array(people)])
    }
}
