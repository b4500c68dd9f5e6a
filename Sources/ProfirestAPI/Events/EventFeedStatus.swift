import Foundation

/// How the client's event feed is reading right now, for a "live" badge or a status line: every reader of the feed
/// (`watchEvents`, an ``EventWatcher``'s `run()`, an `events(…)` sequence being iterated) says where it stands.
///
/// With several readers at once the state shows the least healthy of them (`retrying`, then `connecting`, then
/// `polling`, then `live`).
///
/// ```swift
/// badge.text = api.state.feed == .live ? "Live" : "Catching up"
/// ```
public enum EventFeedStatus: String, Sendable, Hashable, CaseIterable {
    /// No reader runs.
    case stopped
    /// A reader is starting, or opening the live stream (again, after a connection ended).
    case connecting
    /// The live stream is connected: events come as they happen.
    case live
    /// The feed is polled (`GET /v2/events`): the server does not stream now, or the stream is off.
    case polling
    /// The last request failed and the reader waits it out (Retry-After, or a growing wait up to 60 s).
    case retrying

    /// Orders the states from the least healthy, for combining several readers.
    var severity: Int {
        switch self {
        case .retrying: return 4
        case .connecting: return 3
        case .polling: return 2
        case .live: return 1
        case .stopped: return 0
        }
    }
}
