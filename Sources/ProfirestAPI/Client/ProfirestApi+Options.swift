import Foundation

extension ProfirestApi {
    /// The options of a ``ProfirestApi`` client, in the order of the reference's table; each has its default.
    ///
    /// ```swift
    /// let api = ProfirestApi(options: .init(clientID: "profirest-pos", storage: MemoryTokenStorage()))
    /// ```
    public struct Options: Sendable {
        /// The API address; paths go to `<baseURL>/v2`, `/oauth/…` and `/.well-known/…` to its root.
        ///
        /// ```swift
        /// .init(baseURL: "http://127.0.0.1:8080")
        /// ```
        public var baseURL: String
        /// Your client_id.
        ///
        /// ```swift
        /// .init(clientID: "profirest-kds")
        /// ```
        public var clientID: String?
        /// The secret of a confidential client on a server; never in an app on a device.
        ///
        /// ```swift
        /// .init(clientSecret: s)
        /// ```
        public var clientSecret: String?
        /// A fixed access token from elsewhere: sent as it is, never refreshed (a 401 goes to the caller).
        ///
        /// ```swift
        /// .init(accessToken: token)
        /// ```
        public var accessToken: String?
        /// The language of error titles (`Accept-Language`, `cs` by default); nil sends no Accept-Language at all, and
        /// the server answers in its default language (Czech). On Linux the default transport keeps URLSession from
        /// adding one from the process locale.
        ///
        /// ```swift
        /// .init(language: "en")
        /// ```
        public var language: String?
        /// Where the connection's state lives.
        ///
        /// ```swift
        /// .init(storage: FileTokenStorage(path: "tokens.json"))
        /// ```
        public var storage: any TokenStorage
        /// The storage key; nil means `profirest-api:<clientID>`.
        ///
        /// ```swift
        /// .init(storageKey: "profirest-api:shop-42")
        /// ```
        public var storageKey: String?
        /// How many times a retryable failure is retried.
        ///
        /// ```swift
        /// .init(retries: 0)
        /// ```
        public var retries: Int
        /// The first wait before a retry; it doubles up to 30 s, ±25 %.
        ///
        /// ```swift
        /// .init(retryDelay: 0.5)
        /// ```
        public var retryDelay: TimeInterval
        /// The longest Retry-After the library waits; a longer one returns the error with its seconds.
        ///
        /// ```swift
        /// .init(maxRetryWait: 10)
        /// ```
        public var maxRetryWait: TimeInterval
        /// The limit of one attempt, body included.
        ///
        /// ```swift
        /// .init(timeout: 10)
        /// ```
        public var timeout: TimeInterval
        /// The most bytes one answer's body may have; a longer one ends as `response_too_large`. 64 MiB by default:
        /// a list page of the API is kilobytes, so this only stops a runaway answer; raise it per request
        /// (`RequestOptions.maxResponseBytes`) for a large download such as a backup. ``CurlTransport`` and
        /// ``URLSessionTransport`` stop reading at the cap (at once for a Content-Length beyond it), so such an answer
        /// never takes the memory.
        ///
        /// ```swift
        /// .init(maxResponseBytes: 16 << 20)
        /// ```
        public var maxResponseBytes: Int
        /// How long before expiry an access token is refreshed.
        ///
        /// ```swift
        /// .init(refreshMargin: 120)
        /// ```
        public var refreshMargin: TimeInterval
        /// Called when the pairing is lost.
        ///
        /// ```swift
        /// .init(onUnpaired: { _ in Task { @MainActor in model.paired = false } })
        /// ```
        public var onUnpaired: (@Sendable (ProfirestAPIError) -> Void)?
        /// Called once when the staff session ends by itself: its idle timeout or `max_expires_at`, reported on time by a
        /// timer on `clock` (no request needed), or `staff_session_expired` from the server; not on `signOutStaff()` nor
        /// when a new sign-in replaces the session. It may run on any thread.
        ///
        /// ```swift
        /// .init(onStaffExpired: { staff in Task { @MainActor in model.lockScreen() } })
        /// ```
        public var onStaffExpired: (@Sendable (StaffInfo) -> Void)?
        /// Your own transport (proxy, tests); nil means the platform's: ``CurlTransport`` on Linux (one shared by every
        /// such client in the process), ``URLSessionTransport`` elsewhere.
        ///
        /// ```swift
        /// .init(transport: myTransport)
        /// ```
        public var transport: (any HTTPTransport)?
        /// The clock for Retry-After dates, token expiry and the staff session's end; nil means `Date()`.
        ///
        /// ```swift
        /// .init(clock: { fixedDate })
        /// ```
        public var clock: (@Sendable () -> Date)?
        /// How to wait between attempts and until the staff session's end; nil means real time, on one shared timer that
        /// lets go of a wait as soon as its task is cancelled (a cancelled `Task.sleep` keeps its memory on Linux until
        /// its deadline). Tests pass one that returns at once (the staff timer then gives up after a few waits; the next request still notices the end).
        /// A test's `sleep` that moves its clock on should wait until its clock gets there, or a staff session ends
        /// right after the sign-in. (The per-attempt `timeout` always runs on real time, so an instant `sleep` does
        /// not end every attempt.)
        ///
        /// ```swift
        /// .init(sleep: { seconds in waits.append(seconds) })
        /// ```
        public var sleep: (@Sendable (TimeInterval) async throws -> Void)?
        /// Hears what the library does — attempts, retries, refreshes, pairing, staff sessions, the event feed, the
        /// outbox — as redacted ``ProfirestEvent``s; nil costs nothing. Called on the library's threads: keep it quick.
        ///
        /// ```swift
        /// .init(observer: { event in logger.debug("\(event, privacy: .public)") })
        /// ```
        public var observer: (@Sendable (ProfirestEvent) -> Void)?
        /// Certificate authorities the default transport trusts besides the system's (a private CA of a proxy or a
        /// test server); ignored when you pass your own `transport`. Unreadable certificates make every request fail
        /// with a ``ProfirestUsageError`` that says why.
        ///
        /// ```swift
        /// .init(trustedCertificates: .pemFile("/etc/profirest/ca.pem"))
        /// ```
        public var trustedCertificates: TrustedCertificates?

        /// Options for a client; every one left out has the default the reference's table gives.
        ///
        /// - Parameters:
        ///   - baseURL: the API address, `https://api.mujprofirest.cz` by default; `http://127.0.0.1:8080` for the
        ///     sandbox.
        ///   - clientID: your client_id, which pairing and consent need; nil for a fixed `accessToken` or public
        ///     endpoints.
        ///   - clientSecret: the secret of a confidential client on a server; never in an app on a device.
        ///   - accessToken: a fixed access token from elsewhere, sent as it is and never refreshed.
        ///   - language: the language of error titles, `cs` by default; nil sends no Accept-Language.
        ///   - storage: where the connection's state lives, in memory by default (gone when the process ends).
        ///   - storageKey: the key the state is stored under; nil means `profirest-api:<clientID>`.
        ///   - retries: how many times a retryable failure is retried, 3 by default.
        ///   - retryDelay: the first wait before a retry in seconds, 1 by default; it doubles up to 30 s.
        ///   - maxRetryWait: the longest Retry-After the library waits in seconds, 30 by default.
        ///   - timeout: the limit of one attempt in seconds, body included, 30 by default.
        ///   - refreshMargin: how many seconds before expiry the access token is refreshed, 60 by default.
        ///   - onUnpaired: called when the pairing is lost; nil for nothing.
        ///   - onStaffExpired: called once when the staff session ends by itself; nil for nothing.
        ///   - transport: your own transport; nil for the platform's (``CurlTransport`` on Linux,
        ///     ``URLSessionTransport`` elsewhere).
        ///   - clock: the clock for Retry-After dates, token expiry and the staff session's end; nil means `Date()`.
        ///   - sleep: how to wait between attempts and until the staff session's end; nil means real time.
        ///   - observer: hears what the library does, as redacted ``ProfirestEvent``s; nil costs nothing.
        ///   - trustedCertificates: certificate authorities the default transport trusts besides the system's; nil for
        ///     the system's alone.
        ///   - maxResponseBytes: the most bytes one answer's body may have, 64 MiB by default.
        ///
        /// ```swift
        /// ProfirestApi.Options(clientID: "profirest-dochazka", storage: FileTokenStorage(path: "tokens.json"))
        /// ```
        public init(
            baseURL: String = "https://api.mujprofirest.cz",
            clientID: String? = nil,
            clientSecret: String? = nil,
            accessToken: String? = nil,
            language: String? = "cs",
            storage: any TokenStorage = MemoryTokenStorage(),
            storageKey: String? = nil,
            retries: Int = 3,
            retryDelay: TimeInterval = 1,
            maxRetryWait: TimeInterval = 30,
            timeout: TimeInterval = 30,
            refreshMargin: TimeInterval = 60,
            onUnpaired: (@Sendable (ProfirestAPIError) -> Void)? = nil,
            onStaffExpired: (@Sendable (StaffInfo) -> Void)? = nil,
            transport: (any HTTPTransport)? = nil,
            clock: (@Sendable () -> Date)? = nil,
            sleep: (@Sendable (TimeInterval) async throws -> Void)? = nil,
            observer: (@Sendable (ProfirestEvent) -> Void)? = nil,
            trustedCertificates: TrustedCertificates? = nil,
            maxResponseBytes: Int = ProfirestApi.Options.defaultMaxResponseBytes
        ) {
            self.baseURL = baseURL
            self.clientID = clientID
            self.clientSecret = clientSecret
            self.accessToken = accessToken
            self.language = language
            self.storage = storage
            self.storageKey = storageKey
            self.retries = retries
            self.retryDelay = retryDelay
            self.maxRetryWait = maxRetryWait
            self.timeout = timeout
            self.refreshMargin = refreshMargin
            self.onUnpaired = onUnpaired
            self.onStaffExpired = onStaffExpired
            self.transport = transport
            self.clock = clock
            self.sleep = sleep
            self.observer = observer
            self.trustedCertificates = trustedCertificates
            self.maxResponseBytes = maxResponseBytes
        }

        /// 64 MiB: thousands of times a page of the API, small beside a device's memory.
        public static let defaultMaxResponseBytes = Core.defaultMaxResponseBytes

        /// The storage key in effect: `storageKey`, or the one every Profirest library derives from the client_id.
        var effectiveStorageKey: String { storageKey ?? StateStore.defaultKey(clientID: clientID ?? "") }
    }
}
