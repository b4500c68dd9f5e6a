import Foundation

/// What the identity flows share with the client that owns them: the state, the authorization server, who we
/// are, and the injected clock and sleep (so tests run on virtual time). The facade builds one from its options.
struct IdentityContext: Sendable {
    let store: StateStore
    let endpoint: any OAuthEndpoint
    /// nil when the options have none; flows that need one throw a usage error.
    let clientID: String?
    let clientSecret: String?
    /// The API address (`https://api.mujprofirest.cz`), without `/v2`.
    let baseURL: URL
    let clock: @Sendable () -> Date
    /// Waits the given seconds; throws `CancellationError` when the waiting task is cancelled.
    let sleep: @Sendable (TimeInterval) async throws -> Void
    /// The client's `observer` option, nil when nobody listens.
    let observe: (@Sendable (ProfirestEvent) -> Void)?
    /// The client's retry settings, for the calls this layer may send again (a revocation).
    let retry: RetrySchedule

    init(
        store: StateStore, endpoint: any OAuthEndpoint, clientID: String?, clientSecret: String? = nil,
        baseURL: URL = URL(string: "https://api.mujprofirest.cz")!,
        clock: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = RealTime.sleep,
        observe: (@Sendable (ProfirestEvent) -> Void)? = nil, retry: RetrySchedule = RetrySchedule()
    ) {
        self.store = store
        self.endpoint = endpoint
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.baseURL = baseURL
        self.clock = clock
        self.sleep = sleep
        self.observe = observe
        self.retry = retry
    }

    /// The client for token requests, or a usage error naming the call that needs a client_id.
    func client(for call: String) throws -> OAuthClient {
        guard let clientID, !clientID.isEmpty else {
            throw ProfirestUsageError(
                "\(call) needs a clientID: create the client with ProfirestApi.Options(clientID: \"profirest-pos\", …) "
                    + "using the client_id of your application (profirest-pos, profirest-kds, profirest-dochazka, "
                    + "profirest-kuryr, or the one Profirest assigned to your partner application).")
        }
        return OAuthClient(clientID: clientID, clientSecret: clientSecret)
    }
}
