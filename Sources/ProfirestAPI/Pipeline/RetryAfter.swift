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
        let delta = date.timeIntervalSince(now).rounded(.up)
        // A date the parser took from garbage can lie absurdly far ahead; Int(_:) would trap beyond Int.max.
        guard delta.isFinite else { return nil }
        return delta <= 0 ? 0 : (delta < Double(Int.max) ? Int(delta) : Int.max)
    }

    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`)
    /// and asctime (`Sun Nov  6 08:49:37 1994`), all in GMT.
    ///
    /// Parsed by hand rather than with DateFormatter: on Linux, DateFormatter traps on some input (a header
    /// with combining marks took a fuzzed client down), and a header is whatever a server or proxy sent.
    static func httpDate(_ text: String, now: Date) -> Date? {
        guard text.utf8.count <= 64 else { return nil }
        // asctime pads a one-digit day with a space ("Nov  6"): empty pieces are dropped.
        let parts = text.split(separator: " ").map(String.init)
        let year: Int?, month: String, day: String, time: String
        switch parts.count {
        case 6 where parts[0].hasSuffix(",") && parts[5] == "GMT":  // IMF-fixdate
            (day, month, year, time) = (parts[1], parts[2], fixedDigits(parts[3], 4), parts[4])
        case 4 where parts[0].hasSuffix(",") && parts[3] == "GMT":  // RFC 850
            let pieces = parts[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard pieces.count == 3, let short = fixedDigits(pieces[2], 2) else { return nil }
            (day, month, year, time) = (pieces[0], pieces[1], fullYear(short, now: now), parts[2])
        case 5:  // asctime
            (month, day, time, year) = (parts[1], parts[2], parts[3], fixedDigits(parts[4], 4))
        default:
            return nil
        }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false).map { fixedDigits(String($0), 2) }
        guard let year, let monthNumber = months.firstIndex(of: month).map({ $0 + 1 }),
            (1...2).contains(day.utf8.count), let dayNumber = Int(day), day.utf8.allSatisfy({ (48...57).contains($0) }),
            clock.count == 3, let hour = clock[0], let minute = clock[1], let second = clock[2]
        else { return nil }
        // The calendar rules (days of the month, ranges of the clock) are RFC 3339's, so that parser checks them.
        let stamp = String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", year, monthNumber, dayNumber, hour, minute, second)
        return RFC3339.date(from: stamp)
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Exactly `count` ASCII digits as a number, else nil.
    private static func fixedDigits(_ text: String, _ count: Int) -> Int? {
        guard text.utf8.count == count, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(text)
    }

    /// RFC 850's two-digit year: RFC 9110 reads it as the most recent year with those digits that is no more than
    /// 50 years ahead of now.
    private static func fullYear(_ short: Int, now: Date) -> Int {
        let current = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "GMT")!, from: now).year ?? 2000
        var year = current - current % 100 + short
        if year > current + 50 { year -= 100 }
        return year
    }
}
