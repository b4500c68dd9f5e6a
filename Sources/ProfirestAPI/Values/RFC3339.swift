import Foundation

/// RFC 3339 timestamps of the API (`2026-11-29T07:58:12Z`, `2026-11-29T08:58:12.250+01:00`), without a formatter
/// object: thread-safe, allocation-light, and strict — anything else is rejected instead of guessed.
enum RFC3339 {
    /// Parses a timestamp; nil when it is not RFC 3339 (or out of the years 0001–9999).
    static func date(from text: String) -> Date? {
        var bytes = Array(text.utf8)[...]
        func digits(_ count: Int) -> Int? {
            guard bytes.count >= count else { return nil }
            var value = 0
            for _ in 0..<count {
                let byte = bytes.removeFirst()
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        func expect(_ options: [UInt8]) -> Bool {
            guard let byte = bytes.first, options.contains(byte) else { return false }
            bytes.removeFirst()
            return true
        }
        guard let year = digits(4), expect([0x2D]), let month = digits(2), expect([0x2D]), let day = digits(2),
              expect([0x54, 0x74, 0x20]), let hour = digits(2), expect([0x3A]), let minute = digits(2), expect([0x3A]),
              let second = digits(2) else { return nil }
        guard year >= 1, (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour <= 23, minute <= 59, second <= 60 else { return nil }
        var fraction = 0.0
        if expect([0x2E]) {
            var scale = 0.1
            var any = false
            while let byte = bytes.first, byte >= 0x30, byte <= 0x39 {
                bytes.removeFirst()
                fraction += Double(byte - 0x30) * scale
                scale /= 10
                any = true
            }
            guard any else { return nil }
        }
        var offset = 0
        if expect([0x5A, 0x7A]) {
            offset = 0
        } else if let sign = bytes.first, sign == 0x2B || sign == 0x2D {
            bytes.removeFirst()
            guard let offsetHours = digits(2), expect([0x3A]), let offsetMinutes = digits(2), offsetHours <= 23, offsetMinutes <= 59 else { return nil }
            offset = (offsetHours * 3600 + offsetMinutes * 60) * (sign == 0x2D ? -1 : 1)
        } else {
            return nil
        }
        guard bytes.isEmpty else { return nil }
        // A leap second (":60") is read as the last moment of its minute.
        let seconds = daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Formats in UTC with `Z`; milliseconds only when they are not zero, so whole-second timestamps round-trip as sent.
    static func string(from date: Date) -> String {
        var milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        milliseconds -= seconds * 1000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        seconds -= days * 86_400
        let (year, month, day) = civil(fromDays: Int(days))
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(Int(seconds / 3600), 2)):\(pad(Int(seconds % 3600 / 60), 2)):\(pad(Int(seconds % 60), 2))"
        if milliseconds != 0 { text += "." + pad(Int(milliseconds), 3) }
        return text + "Z"
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's well-known algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
