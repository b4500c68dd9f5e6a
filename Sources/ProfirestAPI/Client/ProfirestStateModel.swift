#if canImport(Observation)
import Foundation
import Observation

/// The client's state as an `@Observable` object for SwiftUI (iOS 17, macOS 14 and later): a view that reads
/// `model.state` is drawn again when the pairing, the staff session, the outbox or the event feed changes.
///
/// It follows ``ProfirestApi/stateChanges`` on the main actor from the moment it is made (its `state` is the current
/// one at once) until it is released. Keep one per client, where the app keeps the client.
///
/// ```swift
/// let model = ProfirestStateModel(api: api)   // then in a view: Text(model.state.staff?.name ?? "Signed out")
/// ```
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
@Observable
public final class ProfirestStateModel {
    /// The client's state, updated on the main actor as it changes.
    public private(set) var state: ProfirestState

    /// Whether requests can be authorized; false once the pairing is lost: show the pairing screen.
    public var isPaired: Bool { state.isPaired }
    /// The signed-in employee, nil when nobody is signed in.
    public var staff: StaffInfo? { state.staff }
    /// The writes waiting in the outbox, nil without one.
    public var outbox: OutboxStatus? { state.outbox }
    /// How the event feed reads now.
    public var feed: EventFeedStatus { state.feed }

    @ObservationIgnored private let following = Locked<Task<Void, Never>?>(nil)

    /// Follows `api`'s state from now on.
    ///
    /// - Parameter api: the client whose state to show.
    ///
    /// ```swift
    /// @State private var model = ProfirestStateModel(api: AppClient.api)
    /// ```
    public init(api: ProfirestApi) {
        state = api.state
        let changes = api.stateChanges
        let task = Task { [weak self] in
            for await state in changes {
                guard let self else { return }
                if self.state != state { self.state = state }
            }
        }
        following.withLock { $0 = task }
    }

    deinit {
        following.withLock { $0 }?.cancel()
    }
}
#endif
