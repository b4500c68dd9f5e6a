// ProfirestApi — the facade. Every call, typed or not, ends in one internal entry point:
//
//     func perform<T: Decodable>(_ method: String, path: String, query: [String: QueryValue],
//                                body: RequestBody?, options: RequestOptions, as: T.Type) async throws -> T
//
// Generated typed operations (Generated/TypedOperations.swift) call exactly this: `path` with the path parameters
// already substituted (percent-encoding is done here), `query` merged over `options.query`, `body` as
// `.json(try JSONValue(encoding: model))` or via `encodedBody(_:)`, `T` the response model (`T?`/`JSONValue?`
// where the operation may answer 204, `Data` for binary content). Retries, tokens, Idempotency-Key and errors
// all happen below it (Pipeline/RequestPipeline.swift).
import Foundation

/// The Profirest API v2 client: requests, paged lists, errors and retries for one connection.
///
/// Thread-safe (`Sendable`); share one instance per connection.
///
/// ```swift
/// let api = ProfirestApi(options: .init(clientID: "profirest-dochazka", storage: MemoryTokenStorage()))
/// ```
public final class ProfirestApi: Sendable {
    /// The options type, so `.init(…)` reads naturally. Usage: `let options = ProfirestApi.Options(clientID: "x")`
    public typealias Options = ProfirestOptions

    /// The options this client was made with. Usage: `api.options.baseURL`
    public let options: ProfirestOptions

    let base: Result<APIBase, ProfirestUsageError>
    let pipeline: RequestPipeline
    /// Pairing, consent, tokens and the staff session (Auth/); the pipeline reaches it through `IdentityAuthorizer`.
    let identity: Identity

    /// A client for one connection. Usage: `let api = ProfirestApi(options: .init(baseURL: "http://127.0.0.1:8080"))`
    public convenience init(options: ProfirestOptions) {
        self.init(options: options, authorizer: nil)
    }

    /// The full initializer: `authorizer` nil means the identity's (stored tokens, refresh, staff session);
    /// unit tests of the pipeline pass their own, and drive the per-attempt timer and the jitter.
    init(
        options: ProfirestOptions, authorizer: (any RequestAuthorizer)?,
        attemptTimer: @escaping @Sendable (TimeInterval) async throws -> Void = AttemptDeadline.realTimer,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.options = options
        do {
            base = .success(try APIBase(baseURL: options.baseURL))
        } catch let error as ProfirestUsageError {
            // Reported by the first request: the initializer does not throw, as the reference's examples show.
            base = .failure(error)
        } catch {
            base = .failure(ProfirestUsageError("baseURL \"\(options.baseURL)\" is not usable"))
        }
        let settings = PipelineSettings(
            retries: options.retries, retryDelay: options.retryDelay, maxRetryWait: options.maxRetryWait,
            timeout: options.timeout, language: options.language, clock: options.clock ?? { Date() },
            sleep: options.sleep ?? AttemptDeadline.realTimer, attemptTimer: attemptTimer, random: random,
            observe: options.observer)
        let transport = options.transport ?? URLSessionTransport()
        identity = Self.makeIdentity(options: options, base: base, transport: transport, settings: settings)
        let errors = ErrorFactory(language: options.language, redaction: Redaction(secrets: []))
        pipeline = RequestPipeline(
            transport: transport, authorizer: authorizer ?? IdentityAuthorizer(identity: identity, errors: errors),
            settings: settings)
    }

    /// A new UUIDv7 (RFC 9562) for record ids, strictly increasing within the process.
    /// Usage: `let id: String = ProfirestApi.uuid()`
    public static func uuid() -> String { UUIDv7.make(now: Date()) }

    var errorFactory: ErrorFactory { ErrorFactory(language: options.language, redaction: Redaction(secrets: [])) }
}
