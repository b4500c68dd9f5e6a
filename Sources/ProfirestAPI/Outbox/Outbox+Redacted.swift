import Foundation

extension Outbox: CustomStringConvertible, CustomReflectable {
    /// How many writes wait and since when. Usage: `print(outbox)`
    public var description: String {
        let status = self.status
        return "Outbox(waiting: \(status.count), oldest: \(status.oldestEnqueuedAt.map(RFC3339.string(from:)) ?? "none"))"
    }

    /// What `dump` and debuggers show: the waiting items and the status, never the journal, whose bodies may hold a
    /// PIN (a punch's credential), nor the client behind it. Usage: `dump(outbox)`
    public var customMirror: Mirror {
        Mirror(self, children: ["items": items, "status": status], displayStyle: .class)
    }
}
