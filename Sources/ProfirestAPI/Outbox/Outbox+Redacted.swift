import Foundation

extension Outbox: CustomStringConvertible, CustomReflectable {
    /// How many writes wait and since when, in one line for a log; never a body.
    public var description: String {
        let status = self.status
        return "Outbox(waiting: \(status.count), oldest: \(status.oldestEnqueuedAt.map(RFC3339.string(from:)) ?? "none"))"
    }

    /// Shows `dump` and debuggers the waiting items and the status, and never the journal, whose bodies may hold a
    /// PIN (a punch's credential), nor the client behind it.
    public var customMirror: Mirror {
        Mirror(self, children: ["items": items, "status": status], displayStyle: .class)
    }
}
