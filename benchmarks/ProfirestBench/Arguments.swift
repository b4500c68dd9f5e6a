/// The bench's command-line options: `--name value` pairs read by each part's settings.
extension Array where Element == String {
    /// The value given after the option `name` (`--partner-wave 50`), or nil when the option is absent or has none.
    func value(after name: String) -> String? {
        guard let index = firstIndex(of: name), index + 1 < count else { return nil }
        return self[index + 1]
    }
}
