import Foundation

/// Writes a `JSONValue` as compact JSON with sorted keys, byte for byte as `JSONEncoder` with
/// `[.sortedKeys, .withoutEscapingSlashes]` writes it, without `JSONEncoder`'s boxing of each value — the state
/// document is written after every batch of events.
///
/// Decimals (`.number`) are left to `JSONEncoder`, whose shortest digits this does not reproduce: `write` gives nil
/// for a value that holds one.
enum JSONWriter {
    /// The text, or nil when `value` holds a `.number`.
    static func write(_ value: JSONValue) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        guard append(value, to: &out) else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    private static func append(_ value: JSONValue, to out: inout [UInt8]) -> Bool {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .integer(let i): out.append(contentsOf: String(i).utf8)
        case .number: return false
        case .string(let s): appendString(s, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (n, item) in items.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                guard append(item, to: &out) else { return false }
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            // Sorted as pairs: each value is at hand, not looked up again by its key.
            for (n, member) in members.sorted(by: { precedes($0.key, $1.key) }).enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                appendString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                guard append(member.value, to: &out) else { return false }
            }
            out.append(UInt8(ascii: "}"))
        }
        return true
    }

    /// `text`, as `write` wrote an object, with the string values of the top-level members named in `changes`
    /// replaced: byte for byte what `write` makes of the changed object, at the cost of one pass over the text and
    /// without building the object. A feed's cursor store writes the whole state document after every batch, and
    /// the cursor is all that changed. nil when `text` does not start an object or a member of `changes` is not
    /// one of its top-level members with a string value (a member nested deeper, even under the same name, is
    /// never touched).
    ///
    /// ```swift
    /// JSONWriter.replacingTopLevelStrings(in: #"{"a":{"c":"1"},"c":"2"}"#, ["c": "3"])  // {"a":{"c":"1"},"c":"3"}
    /// ```
    static func replacingTopLevelStrings(in text: String, _ changes: [String: String]) -> String? {
        var keys: [(key: [UInt8], value: String)] = changes.map { change in
            var key: [UInt8] = []
            appendString(change.key, to: &key)
            return (key, change.value)
        }
        var spans: [(range: Range<Int>, value: String)] = []
        let written: [UInt8]?? = text.utf8.withContiguousStorageIfAvailable { bytes -> [UInt8]? in
            guard bytes.first == UInt8(ascii: "{") else { return nil }
            /// The end of the string that opens at `start` (one past its closing quote), or nil when it never closes.
            func stringEnd(from start: Int) -> Int? {
                var i = start + 1
                while i < bytes.count {
                    switch bytes[i] {
                    case UInt8(ascii: "\\"): i += 2
                    case UInt8(ascii: "\""): return i + 1
                    default: i += 1
                    }
                }
                return nil
            }
            var depth = 0
            var expectsKey = false
            var i = 0
            while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: "\""):
                    guard let end = stringEnd(from: i) else { return nil }
                    if depth == 1, expectsKey {
                        expectsKey = false
                        let key = UnsafeBufferPointer(rebasing: bytes[i..<end])
                        if let match = keys.firstIndex(where: { $0.key.elementsEqual(key) }) {
                            // The value follows the colon; only a string is replaced.
                            guard end + 1 < bytes.count, bytes[end] == UInt8(ascii: ":"),
                                bytes[end + 1] == UInt8(ascii: "\""), let valueEnd = stringEnd(from: end + 1)
                            else { return nil }
                            spans.append(((end + 1)..<valueEnd, keys[match].value))
                            keys.remove(at: match)
                            i = valueEnd
                            continue
                        }
                    }
                    i = end
                    continue
                case UInt8(ascii: "{"):
                    depth += 1
                    expectsKey = depth == 1
                case UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                case UInt8(ascii: ","):
                    if depth == 1 { expectsKey = true }
                default:
                    break
                }
                i += 1
            }
            guard keys.isEmpty else { return nil }
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + 64)
            var copied = 0
            // The scan found the spans in the order of the text.
            for span in spans {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<span.range.lowerBound]))
                appendString(span.value, to: &out)
                copied = span.range.upperBound
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied...]))
            return out
        }
        guard let written = written ?? nil else { return nil }
        return String(decoding: written, as: UTF8.self)
    }

    /// `JSONEncoder`'s order of sorted keys.
    static func precedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    private static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings (keys, tokens, cursors) need no escape: copied whole.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: s.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case 0x0A: out.append(contentsOf: #"\n"#.utf8)
            case 0x0D: out.append(contentsOf: #"\r"#.utf8)
            case 0x09: out.append(contentsOf: #"\t"#.utf8)
            case 0x08: out.append(contentsOf: #"\b"#.utf8)
            case 0x0C: out.append(contentsOf: #"\f"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
