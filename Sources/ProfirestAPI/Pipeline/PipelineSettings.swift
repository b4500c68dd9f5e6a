import Foundation

/// What the pipeline, the identity layer and the event feed take from the client's options, resolved once per
/// client: the retry table, the attempt limit, the language of errors, and the injected clock, sleep and observer.
struct PipelineSettings: Sendable {
    var retries: Int
    var retryDelay: TimeInterval
    var maxRetryWait: TimeInterval
    var timeout: TimeInterval
    var language: String?
    var clock: @Sendable () -> Date
    /// Waits between attempts (the `sleep` option).
    var sleep: @Sendable (TimeInterval) async throws -> Void
    /// Bounds one attempt; real time unless a unit test drives it (see `AttemptDeadline`).
    var attemptTimer: @Sendable (TimeInterval) async throws -> Void
    /// 0..<1 for the backoff jitter.
    var random: @Sendable () -> Double
    /// The `observer` option; nil when nobody listens, so nothing is built for it.
    var observe: (@Sendable (ProfirestEvent) -> Void)? = nil

    /// The retry table of this client.
    var retrySchedule: RetrySchedule {
        RetrySchedule(retries: max(0, retries), retryDelay: retryDelay, maxRetryWait: maxRetryWait, random: random)
    }

    /// The error factory in the client's language, blanking `secrets` (the tokens and form secrets of an attempt)
    /// wherever a server echoes them.
    func errors(scrubbing secrets: [String] = []) -> ErrorFactory {
        ErrorFactory(language: language, redaction: Redaction(secrets: secrets))
    }
}
