import Foundation

/// Numbers in an answer that no Swift number holds (`1e400`, a 30-digit integer): `JSONDecoder` refuses the whole
/// document for one of them, as "not valid JSON" at `$`, although the JSON is valid and the member may be one the
/// model does not even read.
///
/// Used only after a decode failed, so a normal answer costs nothing: each such number is rewritten as a marked
/// string, the answer decoded again — a member the model does not read is then skipped, a `JSONValue` holds it as
/// `.number` (infinite when it overflows a `Double`) — and a member that does read it fails with its JSON path and
/// the number as sent (`at $.items[3].count: 1e400 does not fit in Int`). A number that fits a `Double` but not the
/// integer member reading it (`1.5`), which Linux's decoder also reports as invalid JSON at `$`, is found the same way.
enum OversizedNumbers {
    /// U+10FFFF, a noncharacter no text of the API holds, then the number as it was sent.
    private static let marker: [UInt8] = [0xF4, 0x8F, 0xBF, 0xBF]
    private static let markerText = String(decoding: marker, as: UTF8.self)

    /// Set in the decoder's `userInfo` of the second decode: a `JSONValue` reads a marked string back as its number.
    static let userInfoKey = CodingUserInfoKey(rawValue: "cz.profirest.oversizedNumbers")!

    /// A decoder for the rewritten document.
    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.userInfo[userInfoKey] = true
        return decoder
    }()

    /// What a failed decode of `data` as `T` comes to once its oversized numbers are set aside: the value, or the
    /// reason naming the path and the number; nil when `data` holds no such number (the first failure stands).
    static func retry<T: Decodable>(_ type: T.Type, from data: Data) -> Result<T, DecodingError>? {
        let found = find(in: data)
        guard !found.isEmpty else { return misfit(T.self, in: data).map { .failure($0) } }
        let rewritten = rewrite(data, found)
        do {
            return .success(try decoder.decode(T.self, from: rewritten))
        } catch let error as DecodingError {
            return .failure(error)
        } catch {
            return nil
        }
    }

    /// Where and why, `<number> does not fit in <type>`, when `error` (from `retry`) failed on a set-aside number.
    static func explain(_ error: DecodingError, in data: Data) -> (path: [CodingKey], reason: String)? {
        let path: [CodingKey]
        let type: Any.Type?
        switch error {
        case .typeMismatch(let expected, let context):
            (path, type) = (context.codingPath, expected)
        case .dataCorrupted(let context):
            (path, type) = (context.codingPath, nil)
        default:
            return nil
        }
        guard let text = member(at: path, of: rewrite(data, find(in: data)))?.stringValue, text.hasPrefix(markerText)
        else { return nil }
        let number = text.dropFirst(markerText.count)
        let target = type.map { "\($0)" } ?? "the member's type"
        return (path, "\(number) does not fit in \(target)")
    }

    /// The number a marked string stands for, when `decoder` decodes a rewritten document.
    static func number(marked text: String, decoder: any Decoder) -> Double? {
        guard text.utf8.first == marker[0], text.hasPrefix(markerText), decoder.userInfo[userInfoKey] as? Bool == true
        else { return nil }
        return Double(text.dropFirst(markerText.count))
    }

    /// Where an integer member met a number it cannot hold exactly (`1.5`, `9223372036854775808` for `Int`), which
    /// Linux's `JSONDecoder` reports as invalid JSON at `$`: an error naming the member and the number, nil when that
    /// is not what failed.
    ///
    /// Each number an `Int` cannot hold is set aside as a marked string and the answer decoded again: the decode
    /// stops at the first member that reads one. An integer member is the culprit; any other (a `Double`) takes its
    /// number back and the search goes on — one decode a candidate, within a budget of bytes decoded, and only after
    /// a decode failed. Which candidate a failing member read is looked up by its path in one tree of the answer whose
    /// candidates are marked with their index, so equal numbers in two members are told apart.
    private static func misfit<T: Decodable>(_ type: T.Type, in answer: Data) -> DecodingError? {
        let data = answer.startIndex == 0 ? answer : Data(answer)  // ranges count from 0
        var candidates = find(in: data, where: { !fitsInt($0) })
        guard !candidates.isEmpty,
              let indexed = try? JSONDecoder().decode(JSONValue.self, from: rewrite(data, candidates, indexed: true))
        else { return nil }
        let attempts = min(candidates.count, max(1, misfitBudget / max(data.count, 1) - 1))  // the tree, then one each
        for _ in 0..<attempts {
            guard case .typeMismatch(let expected, let context)? = decodeError(T.self, rewrite(data, candidates)),
                  let text = value(at: context.codingPath, in: indexed)?.stringValue, text.hasPrefix(markerText),
                  let separator = text.firstIndex(of: ":"),
                  let found = Int(text[text.index(after: text.startIndex)..<separator]),
                  let index = candidates.firstIndex(where: { $0.lowerBound == found })
            else { return nil }
            let number = String(text[text.index(after: separator)...])
            guard let integer = expected as? any FixedWidthInteger.Type, !holds(integer, number) else {
                candidates.remove(at: index)
                if candidates.isEmpty { return nil }
                continue
            }
            return .dataCorrupted(.init(
                codingPath: context.codingPath, debugDescription: "\(number) does not fit in \(expected)"))
        }
        return .dataCorrupted(.init(
            codingPath: [], debugDescription: "a number does not fit the type of the member that reads it"))
    }

    /// Bytes the misfit search may decode in all: a few decodes of a large answer, dozens of a small one.
    private static let misfitBudget = 8 << 20

    private static func decodeError<T: Decodable>(_ type: T.Type, _ data: Data) -> DecodingError? {
        do {
            _ = try decoder.decode(T.self, from: data)
            return nil
        } catch {
            return error as? DecodingError
        }
    }

    /// The value at `path` of a rewritten document.
    private static func member(at path: [CodingKey], of rewritten: Data) -> JSONValue? {
        guard let tree = try? JSONDecoder().decode(JSONValue.self, from: rewritten) else { return nil }
        return value(at: path, in: tree)
    }

    /// The value at `path` of `tree`.
    private static func value(at path: [CodingKey], in tree: JSONValue) -> JSONValue? {
        var value = tree
        for key in path {
            if case .array = value, let index = key.intValue, let element = value[index] {
                value = element
            } else if let member = value[key.stringValue] {
                value = member
            } else {
                return nil
            }
        }
        return value
    }

    /// The byte ranges of the number literals (outside strings) that fit neither `Int`, `UInt64` nor a finite
    /// `Double`.
    static func find(in data: Data) -> [Range<Int>] { find(in: data, where: { !fits($0) }) }

    /// The byte ranges of the number literals outside strings that `select` picks.
    private static func find(in data: Data, where select: (UnsafeBufferPointer<UInt8>) -> Bool) -> [Range<Int>] {
        data.withUnsafeBytes { raw -> [Range<Int>] in
            let bytes = raw.bindMemory(to: UInt8.self)
            var found: [Range<Int>] = []
            var i = 0
            while i < bytes.count {
                let byte = bytes[i]
                if byte == UInt8(ascii: "\"") {
                    i += 1
                    while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
                        i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1
                    }
                    i += 1
                } else if byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                    let start = i
                    i += 1
                    while i < bytes.count, isNumberByte(bytes[i]) { i += 1 }
                    if select(UnsafeBufferPointer(rebasing: bytes[start..<i])) { found.append(start..<i) }
                } else {
                    i += 1
                }
            }
            return found
        }
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"),
             UInt8(ascii: "+"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    private static func fits(_ literal: UnsafeBufferPointer<UInt8>) -> Bool {
        let text = String(decoding: literal, as: UTF8.self)
        let integral = !literal.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
        if integral, Int(text) != nil || UInt64(text) != nil { return true }
        guard let value = Double(text) else { return true }  // not a number at all: the parser's to report
        return value.isFinite && !integral
    }

    private static func holds<I: FixedWidthInteger>(_ type: I.Type, _ number: String) -> Bool {
        if I(number, radix: 10) != nil { return true }
        return Double(number).flatMap { I(exactly: $0) } != nil
    }

    /// Whether an `Int` holds the literal's value exactly (`1.0` and `1e3` do, `1.5` does not).
    private static func fitsInt(_ literal: UnsafeBufferPointer<UInt8>) -> Bool {
        let text = String(decoding: literal, as: UTF8.self)
        if Int(text) != nil { return true }
        guard let value = Double(text), value.isFinite else { return true }  // the parser's or `find`'s to report
        return value.rounded() == value && abs(value) < 0x1p63
    }

    /// `data` with each range replaced by a marked string of its text; `indexed` puts the range's offset and a colon
    /// between the marker and the text, to tell equal numbers apart (such a string no longer reads as a number).
    private static func rewrite(_ data: Data, _ ranges: [Range<Int>], indexed: Bool = false) -> Data {
        var out = Data(capacity: data.count + ranges.count * 8)
        var last = 0
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            for range in ranges {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[last..<range.lowerBound]))
                out.append(UInt8(ascii: "\""))
                out.append(contentsOf: marker)
                if indexed { out.append(contentsOf: "\(range.lowerBound):".utf8) }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[range]))
                out.append(UInt8(ascii: "\""))
                last = range.upperBound
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[last..<bytes.count]))
        }
        return out
    }
}
