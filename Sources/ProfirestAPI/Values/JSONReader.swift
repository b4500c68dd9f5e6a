import Foundation

/// Reads JSON text (RFC 8259, UTF-8) straight into a `JSONValue`, so that a busy feed does not pay for
/// `JSONDecoder`'s trial decodes — `JSONValue.init(from:)` throws an error for each kind a value is not.
///
/// It gives what `JSONDecoder().decode(JSONValue.self, from:)` gives, value for value: an integral number that fits
/// `Int` is `.integer` (`1.0`, `1e3` and `-0` included), any other finite number `.number`, a number beyond `Double`
/// is refused, as are invalid UTF-8, unpaired surrogate escapes and nesting deeper than `maximumDepth`; of duplicate
/// keys the first wins. It is stricter than `JSONDecoder` in two ways RFC 8259 asks for: a trailing comma is refused,
/// and so is a broken value under a repeated key (which `JSONDecoder` never reads); `JSONValueDecoder.decode` hands
/// such text to `JSONDecoder`. A refusal is a `DecodingError.dataCorrupted` at `$` naming the byte where it went wrong.
enum JSONReader {
    /// Arrays and objects nested deeper than this are refused, as `JSONDecoder` refuses them.
    static let maximumDepth = 512

    /// Asked how it reads the rare number whose reading as `Int` depends on its digits beyond a `Double`'s.
    private static let foundation = JSONDecoder()

    /// The value `bytes` hold, surrounded by optional whitespace.
    static func value(from bytes: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        var reader = Cursor(bytes: bytes)
        // A UTF-8 byte order mark is skipped, as JSONDecoder skips it (RFC 8259 lets a reader ignore it).
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { reader.index = 3 }
        do {
            reader.skipWhitespace()
            let value = try reader.readValue(depth: 0)
            reader.skipWhitespace()
            guard reader.index == bytes.count else { throw Failure(reason: "unexpected text after the value", at: reader.index) }
            return value
        } catch let failure as Failure {
            throw DecodingError.dataCorrupted(.init(
                codingPath: [], debugDescription: "The given data was not valid JSON: \(failure.reason) at byte \(failure.offset)."))
        }
    }

    /// The value `data` holds.
    static func value(from data: Data) throws -> JSONValue {
        try data.withUnsafeBytes { try value(from: $0.bindMemory(to: UInt8.self)) }
    }

    /// The value a string's UTF-8 holds, read in place when the string is stored contiguously.
    static func value(from text: String) throws -> JSONValue {
        var text = text
        return try text.withUTF8 { try value(from: $0) }
    }

    /// Why the text was refused and where.
    private struct Failure: Error {
        var reason: String
        var offset: Int
        init(reason: String, at offset: Int) {
            self.reason = reason
            self.offset = offset
        }
    }

    /// A position in the text being read.
    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        mutating func readValue(depth: Int) throws -> JSONValue {
            guard index < bytes.count else { throw Failure(reason: "unexpected end of text", at: index) }
            switch bytes[index] {
            case UInt8(ascii: "\""): return .string(try readString())
            case UInt8(ascii: "{"): return try readObject(depth: depth + 1)
            case UInt8(ascii: "["): return try readArray(depth: depth + 1)
            case UInt8(ascii: "t"): try expect("true"); return .bool(true)
            case UInt8(ascii: "f"): try expect("false"); return .bool(false)
            case UInt8(ascii: "n"): try expect("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try readNumber()
            default: throw Failure(reason: "unexpected character", at: index)
            }
        }

        private mutating func expect(_ word: StaticString) throws {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count,
                  memcmp(bytes.baseAddress! + index, word.utf8Start, count) == 0
            else { throw Failure(reason: "unexpected character", at: index) }
            index += count
        }

        private mutating func readObject(depth: Int) throws -> JSONValue {
            guard depth <= JSONReader.maximumDepth else { throw Failure(reason: "nested too deeply", at: index) }
            index += 1
            var object: [String: JSONValue] = [:]
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(object)
            }
            while true {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    throw Failure(reason: "expected a member name", at: index)
                }
                let key = try readString()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                    throw Failure(reason: "expected ':'", at: index)
                }
                index += 1
                skipWhitespace()
                let value = try readValue(depth: depth)
                // The first of duplicate keys wins, as with JSONDecoder.
                if object[key] == nil { object[key] = value }
                if try endsAfterMember(closing: "}") { return .object(object) }
            }
        }

        private mutating func readArray(depth: Int) throws -> JSONValue {
            guard depth <= JSONReader.maximumDepth else { throw Failure(reason: "nested too deeply", at: index) }
            index += 1
            var array: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(array)
            }
            while true {
                array.append(try readValue(depth: depth))
                if try endsAfterMember(closing: "]") { return .array(array) }
            }
        }

        /// After an object's member or an array's element: true at the closing bracket, false at a comma (the next
        /// one then follows); both are consumed.
        private mutating func endsAfterMember(closing: Unicode.Scalar) throws -> Bool {
            skipWhitespace()
            guard index < bytes.count else { throw Failure(reason: "unexpected end of text", at: index) }
            switch bytes[index] {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
                return false
            case UInt8(ascii: closing):
                index += 1
                return true
            default:
                throw Failure(reason: "expected ',' or '\(closing)'", at: index)
            }
        }

        /// A string from its opening quote; the text between quotes without escapes is used as it is.
        private mutating func readString() throws -> String {
            index += 1
            let start = index
            var ascii = true
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    if !ascii, let bad = JSONReader.invalidUTF8(in: raw) {
                        throw Failure(reason: "invalid UTF-8", at: start + bad)
                    }
                    index += 1
                    return String(decoding: raw, as: UTF8.self)
                }
                if byte == UInt8(ascii: "\\") { return try readEscapedString(from: start) }
                if byte < 0x20 { throw Failure(reason: "unescaped control character in a string", at: index) }
                if byte >= 0x80 { ascii = false }
                index += 1
            }
            throw Failure(reason: "unterminated string", at: start - 1)
        }

        /// The rest of a string that holds an escape, its bytes gathered in a buffer.
        private mutating func readEscapedString(from start: Int) throws -> String {
            var out: [UInt8] = []
            out.reserveCapacity(index - start + 16)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    if let bad = out.withUnsafeBufferPointer({ JSONReader.invalidUTF8(in: $0) }) {
                        throw Failure(reason: "invalid UTF-8", at: start + bad)
                    }
                    return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    try readEscape(into: &out)
                case 0..<0x20:
                    throw Failure(reason: "unescaped control character in a string", at: index)
                default:
                    out.append(byte)
                    index += 1
                }
            }
            throw Failure(reason: "unterminated string", at: start - 1)
        }

        private mutating func readEscape(into out: inout [UInt8]) throws {
            let at = index
            index += 1
            guard index < bytes.count else { throw Failure(reason: "unterminated string", at: at) }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = UInt32(try readHex4(escapeAt: at))
                if (0xD800...0xDBFF).contains(scalar) {
                    guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                    else { throw Failure(reason: "a high surrogate escape without its low surrogate", at: at) }
                    index += 2
                    let low = UInt32(try readHex4(escapeAt: index - 2))
                    guard (0xDC00...0xDFFF).contains(low) else {
                        throw Failure(reason: "a high surrogate escape without its low surrogate", at: at)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw Failure(reason: "a low surrogate escape without its high surrogate", at: at)
                }
                out.append(contentsOf: UTF8.encode(Unicode.Scalar(scalar)!)!)
            default:
                throw Failure(reason: "invalid escape", at: at)
            }
        }

        private mutating func readHex4(escapeAt at: Int) throws -> UInt16 {
            guard bytes.count - index >= 4 else { throw Failure(reason: "invalid \\u escape", at: at) }
            var value: UInt16 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw Failure(reason: "invalid \\u escape", at: at)
                }
                value = value << 4 | UInt16(digit)
                index += 1
            }
            return value
        }

        /// A number, by RFC 8259's grammar; short integers are summed in place, anything else goes through the
        /// standard library's `Int` and `Double` parsers, as `JSONDecoder` does.
        private mutating func readNumber() throws -> JSONValue {
            let start = index
            let negative = bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw Failure(reason: "invalid number", at: start) }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            let integerEnd = index
            var integral = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                integral = false
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else { throw Failure(reason: "invalid number", at: start) }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                integral = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard index < bytes.count, isDigit(bytes[index]) else { throw Failure(reason: "invalid number", at: start) }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            let digitsStart = negative ? start + 1 : start
            if integral && integerEnd - digitsStart <= 18 {
                var magnitude = 0
                for i in digitsStart..<integerEnd { magnitude = magnitude &* 10 &+ Int(bytes[i] &- UInt8(ascii: "0")) }
                return .integer(negative ? -magnitude : magnitude)
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            if integral, let exact = Int(text) { return .integer(exact) }
            guard let double = Double(text), double.isFinite else {
                throw Failure(reason: "number \(text) is not representable in Swift", at: start)
            }
            guard let exact = Int(exactly: double) else { return .number(double) }
            // Below 2^53 the double is the integer; from there on JSONDecoder reads the text once more (as a
            // `Decimal`), with rules of its own — asked directly, it gives the same answer, and such numbers are rare.
            if double.magnitude < 0x1p53 { return .integer(exact) }
            if let integer = try? JSONReader.foundation.decode(Int.self, from: Data(text.utf8)) { return .integer(integer) }
            return .number(double)
        }

        private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
    }

    /// The offset of the first byte of `bytes` that is not well-formed UTF-8 (overlong forms, surrogates and
    /// code points beyond U+10FFFF refused), nil when all are.
    static func invalidUTF8(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            if b < 0x80 {
                i += 1
            } else if b < 0xC2 {
                return i
            } else if b < 0xE0 {
                guard i + 1 < n, bytes[i + 1] & 0xC0 == 0x80 else { return i }
                i += 2
            } else if b < 0xF0 {
                guard i + 2 < n else { return i }
                let b1 = bytes[i + 1]
                let low: UInt8 = b == 0xE0 ? 0xA0 : 0x80
                let high: UInt8 = b == 0xED ? 0x9F : 0xBF
                guard b1 >= low, b1 <= high, bytes[i + 2] & 0xC0 == 0x80 else { return i }
                i += 3
            } else if b < 0xF5 {
                guard i + 3 < n else { return i }
                let b1 = bytes[i + 1]
                let low: UInt8 = b == 0xF0 ? 0x90 : 0x80
                let high: UInt8 = b == 0xF4 ? 0x8F : 0xBF
                guard b1 >= low, b1 <= high, bytes[i + 2] & 0xC0 == 0x80, bytes[i + 3] & 0xC0 == 0x80 else { return i }
                i += 4
            } else {
                return i
            }
        }
        return nil
    }
}
