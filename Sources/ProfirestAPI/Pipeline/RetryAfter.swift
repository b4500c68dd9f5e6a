import Foundation

/// Reads a Retry-After header (RFC 9110 §10.2.3): delta-seconds, or an HTTP date in any of its three forms.
enum RetryAfter {
    /// Whole seconds to wait from `now`, rounded up; 0 for a date in the past; nil when absent or unreadable.
    static func seconds(_ value: String?, now: Date) -> Int? {
        guard let raw = value?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
        if raw.allSatisfy(\.isASCII) && raw.allSatisfy(\.isNumber) {
            return Int(raw) ?? Int.max
        }
        guard let date = httpDate(raw, now: now) else { return nil }
        let delta = date.timeIntervalSince(now)
        return delta <= 0 ? 0 : Int(delta.rounded(.up))
    }

    /// IMF-fixdate, the obsolete RFC 850 form and asctime, all in GMT.
    static func httpDate(_ text: String, now: Date) -> Date? {
        // asctime pads a one-digit day with a space ("Nov  6"): collapse runs of spaces first.
        let normalized = text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        let formats = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            // RFC 850 two-digit years: RFC 9110 reads them as no more than 50 years ahead.
            formatter.twoDigitStartDate = now.addingTimeInterval(-50 * 365.25 * 86_400)
            formatter.dateFormat = format
            if let date = formatter.date(from: normalized) { return date }
        }
        return nil
    }
}
