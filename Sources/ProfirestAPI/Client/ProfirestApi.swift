// ProfirestApi — the facade. It builds requests and hands them to the pipeline (Pipeline/RequestPipeline.swift), where
// the Idempotency-Key, the tokens, the attempts and the retries happen. Its internal entry points are in
// ProfirestApi+Perform.swift:
// - `execute(_:path:query:body:options:)` takes an already encoded body, builds the request with `outgoing` (the path
//   resolved against `baseURL`, the query, the headers) and runs it through `pipeline.execute`. The methods with a
//   model body (their private `send(model:…)`), the public `send` (the whole APIResponse) and the outbox's
//   deliveries (Outbox/OutboxDelivery.swift) call it directly.
// - `perform(_:path:query:body:options:as:)` encodes a `RequestBody`, calls `execute` and decodes the answer. The
//   other `get`/`post`/… methods, `request` without a model body, `pages`/`all` and the event feed's pages use it.
// - The event stream uses `outgoing` and then `pipeline.stream` (RequestPipeline+Stream.swift, no retries).
// The OAuth calls (pairing, consent, refresh, revocation) use none of these: Identity sends them through
// Auth/OAuthHTTPEndpoint.swift, which runs one `Attempt` per call. The typed operations
// (Generated/TypedOperations.swift) call the public `get`/`post`/… methods with the path parameters percent-encoded.
import Foundation

/// The Profirest API v2 client: requests, paged lists, errors and retries for one connection.
///
/// Thread-safe (`Sendable`); share one instance per connection.
///
/// ```swift
/// let api = ProfirestApi(options: .init(clientID: "profirest-dochazka", storage: MemoryTokenStorage()))
/// ```
public final class ProfirestApi: Sendable {
    /// The options this client was made with.
    ///
    /// ```swift
    /// api.options.baseURL
    /// ```
    public let options: Options

    let base: Result<APIBase, ProfirestUsageError>
    let pipeline: RequestPipeline
    /// Pairing, consent, tokens and the staff session (Auth/); the pipeline reaches it through `IdentityAuthorizer`.
    let identity: Identity

    /// A client for one connection.
    ///
    /// - Parameter options: the address, your client_id, the token storage, retries and the rest; see ``Options``.
    ///
    /// ```swift
    /// let api = ProfirestApi(options: .init(baseURL: "http://127.0.0.1:8080"))
    /// ```
    public convenience init(options: Options) {
        self.init(options: options, authorizer: nil)
    }

    /// The full initializer: `authorizer` nil means the identity's (stored tokens, refresh, staff session);
    /// unit tests of the pipeline pass their own, and drive the per-attempt timer and the jitter.
    init(
        options: Options, authorizer: (any RequestAuthorizer)?,
        attemptTimer: @escaping @Sendable (TimeInterval) async throws -> Void = RealTime.sleep,
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
            sleep: options.sleep ?? RealTime.sleep, attemptTimer: attemptTimer, random: random,
            observe: options.observer)
        let transport = options.transport
            ?? DefaultTransport.make(trusting: options.trustedCertificates, observe: options.observer)
        identity = Self.makeIdentity(options: options, base: base, transport: transport, settings: settings)
        pipeline = RequestPipeline(
            transport: transport, authorizer: authorizer ?? IdentityAuthorizer(identity: identity, errors: settings.errors()),
            settings: settings)
    }

    /// A new UUIDv7 (RFC 9562) for record ids, strictly increasing within the process.
    ///
    /// ```swift
    /// let id: String = ProfirestApi.uuid()
    /// ```
    public static func uuid() -> String { UUIDv7.make(now: Date()) }

    /// The resolved options the layers above the pipeline (the outbox, the event feed) work with.
    var settings: PipelineSettings { pipeline.settings }

    var errorFactory: ErrorFactory { settings.errors() }
}
