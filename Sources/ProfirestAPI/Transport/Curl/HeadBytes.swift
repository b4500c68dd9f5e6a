#if os(Linux) && !PROFIREST_NO_CURL
import Foundation

/// Byte-level reading of an HTTP head's lines and of header names, for the libcurl transport's callbacks: each line
/// is read where libcurl hands it over, and Strings are made only for what is kept.
enum HeadBytes {
    /// Whether `bytes` starts with the ASCII `prefix`.
    static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        let start = prefix.utf8Start
        for index in 0..<count where bytes[index] != start[index] { return false }
        return true
    }

    /// Whether `bytes` are the ASCII `name`, without regard to ASCII case.
    static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard bytes.count == count else { return false }
        let start = name.utf8Start
        for index in 0..<count where lowered(bytes[index]) != lowered(start[index]) { return false }
        return true
    }

    /// Whether the header `name` is `other` (ASCII), without regard to ASCII case.
    static func equalsIgnoringCase(_ name: String, _ other: StaticString) -> Bool {
        var name = name
        return name.withUTF8 { equalsIgnoringCase(UnsafeRawBufferPointer($0), other) }
    }

    private static func lowered(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    /// The status code of a status line (`HTTP/1.1 200 OK`): its second word, three digits from 100 to 599; nil when
    /// the line has none.
    static func statusCode(_ line: UnsafeRawBufferPointer) -> Int? {
        var index = 0
        // The first word (the protocol), then the spaces after it (as many as there are).
        while index < line.count, line[index] != 0x20 { index += 1 }
        while index < line.count, line[index] == 0x20 { index += 1 }
        let start = index
        while index < line.count, line[index] != 0x20 { index += 1 }
        guard index - start == 3 else { return nil }
        var code = 0
        for offset in start..<index {
            let byte = line[offset]
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            code = code * 10 + Int(byte - 0x30)
        }
        return (100...599).contains(code) ? code : nil
    }

    /// `bytes` as a String without the white space around it (what `trimmingCharacters(in: .whitespaces)` leaves):
    /// spaces and tabs cut as bytes, and Foundation's trim only when the text starts or ends outside ASCII, where
    /// Unicode white space (a no-break space) may be.
    static func trimmed(_ bytes: UnsafeRawBufferPointer) -> String {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        let text = string(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
        if start < end, bytes[start] >= 0x80 || bytes[end - 1] >= 0x80 {
            return text.trimmingCharacters(in: .whitespaces)
        }
        return text
    }

    /// `bytes` decoded as UTF-8 (invalid sequences repaired), through the typed buffer that String decodes
    /// without its generic path.
    static func string(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    }

    /// `value` without the white space around it, as `trimmingCharacters(in: .whitespaces)` would leave it, with no
    /// copy when there is none to cut.
    static func trimmed(_ value: String) -> String {
        guard let first = value.utf8.first, let last = value.utf8.last else { return value }
        let plain: (UInt8) -> Bool = { $0 != 0x20 && $0 != 0x09 && $0 < 0x80 }
        if plain(first), plain(last) { return value }
        return value.trimmingCharacters(in: .whitespaces)
    }
}
#endif
