import Foundation

/// Everything about a client that a screen shows and that changes by itself — the pairing, the employee signed in,
/// the writes waiting in the outbox, the event feed — as one value, so an app can follow it through
/// ``ProfirestApi/stateChanges`` or ``ProfirestStateModel`` instead of polling each property.
///
/// The same values as the synchronous readers (``ProfirestApi/isPaired``, ``ProfirestApi/staff``, ``Outbox/status``,
/// ``EventWatcher/isStreaming``) at one moment.
///
/// ```swift
/// let state = api.state
/// title = state.staff?.name ?? (state.isPaired ? "Signed out" : "Not paired")
/// ```
public struct ProfirestState: Sendable, Hashable {
    /// Whether requests can be authorized (``ProfirestApi/isPaired``): false once the pairing is lost or forgotten.
    public var isPaired: Bool
    /// The paired device's restaurant (``ProfirestApi/restaurantID``).
    public var restaurantID: String?
    /// The paired device's id (``ProfirestApi/deviceID``).
    public var deviceID: String?
    /// The granted scopes (``ProfirestApi/scopes``).
    public var scopes: [String]
    /// The signed-in employee and when their session ends (``ProfirestApi/staff``); nil when nobody is signed in or
    /// the session ran out.
    public var staff: StaffInfo?
    /// The writes waiting in the outboxes opened with ``ProfirestApi/outbox(path:capacity:onFailure:)`` — how many,
    /// since when, the last failure — all of them together; nil while none is open. Counts what this process saw:
    /// another process sharing the journal shows up when this one next delivers.
    public var outbox: OutboxStatus?
    /// How the event feed reads now (the least healthy of its readers), ``EventFeedStatus/stopped`` when none runs.
    public var feed: EventFeedStatus

    /// Makes a state, for previews and tests of code that shows one.
    ///
    /// - Parameters:
    ///   - isPaired: whether requests can be authorized.
    ///   - restaurantID: the paired device's restaurant.
    ///   - deviceID: the paired device's id.
    ///   - scopes: the granted scopes.
    ///   - staff: the signed-in employee, nil for nobody.
    ///   - outbox: the writes waiting, nil without an outbox.
    ///   - feed: how the event feed reads.
    ///
    /// ```swift
    /// let preview = ProfirestState(isPaired: true, restaurantID: "11", feed: .live)
    /// ```
    public init(
        isPaired: Bool, restaurantID: String? = nil, deviceID: String? = nil, scopes: [String] = [],
        staff: StaffInfo? = nil, outbox: OutboxStatus? = nil, feed: EventFeedStatus = .stopped
    ) {
        self.isPaired = isPaired
        self.restaurantID = restaurantID
        self.deviceID = deviceID
        self.scopes = scopes
        self.staff = staff
        self.outbox = outbox
        self.feed = feed
    }
}
