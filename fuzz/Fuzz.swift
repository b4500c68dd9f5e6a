// libFuzzer entry for the parsers that read what a server (or a file) hands the library: the event stream, error
// and model responses, the state document, dates and Retry-After. Compiled together with the library's sources
// (see `make fuzz`), so it reaches internal types. The first input byte picks the target; every target checks a
// property besides "no crash":
//
//   0  event stream     the events do not depend on how the bytes were cut into chunks
//   1  error response   a code is always set, the status is kept, and a known secret never survives into the error
//   2  model response   decoding gives a value or an invalid_response error, never anything else
//   3  state document   decoding gives a state or a StorageError; a decoded state re-encodes and decodes equal, and
//                       replacing its cursors in that text writes the bytes of encoding the changed state
//   4  dates            a parsed RFC 3339 date prints and parses back to the same instant; Retry-After is ≥ 0
//   5  JSON values      a JSONValue that decodes encodes and decodes back equal (large and odd numbers included),
//                       and JSONWriter writes JSONEncoder's bytes for it (sorted keys, slashes unescaped);
//                       JSONReader reads what JSONDecoder reads, the same value of the same kind, and refuses what it
//                       refuses (besides what RFC 8259 does not allow: a trailing comma, a broken value under a
//                       repeated key, which JSONDecoder never reads); with JSONDecoder behind it for those,
//                       JSONValueDecoder gives what JSONDecoder gives, for a JSONValue and for an Event
import Foundation

private let secret = "at_fuzz_secret_0123456789"
private let fixedNow = Date(timeIntervalSince1970: 1_795_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count > 1 else { return 0 }
    let bytes = Data(bytes: start, count: count)
    let selector = bytes[bytes.startIndex]
    let input = bytes.dropFirst()
    switch selector % 6 {
    case 0: fuzzEventStream(Data(input))
    case 1: fuzzErrorResponse(Data(input))
    case 2: fuzzModelResponse(Data(input))
    case 3: fuzzStateDocument(Data(input))
    case 4: fuzzDates(Data(input))
    default:
        fuzzJSONValue(Data(input))
        fuzzJSONReader(Data(input))
    }
    return 0
}

private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() {
        FileHandle.standardError.write(Data("property violated: \(message())\n".utf8))
        abort()
    }
}

/// Whole input vs the same bytes cut at two points taken from the input itself.
private func fuzzEventStream(_ input: Data) {
    guard input.count > 2 else { return }
    let cutA = Int(input[input.startIndex]) % (input.count - 1)
    let cutB = cutA + Int(input[input.startIndex + 1]) % (input.count - cutA)
    let body = Data(input.dropFirst(2))
    func parse(_ chunks: [Data]) -> (events: [ServerSentEvent], failed: Bool, retry: Int?) {
        var parser = ServerSentEvents(limit: 4096)
        var events: [ServerSentEvent] = []
        do {
            for chunk in chunks { events += try parser.feed(chunk) }
        } catch {
            return (events, true, parser.retry)
        }
        parser.finish()
        return (events, false, parser.retry)
    }
    let whole = parse([body])
    let a = min(cutA, body.count), b = min(max(cutB, a), body.count)
    let cut = parse([body.prefix(a), body.dropFirst(a).prefix(b - a), body.dropFirst(b)].map { Data($0) })
    if !whole.failed && !cut.failed {
        check(whole.events == cut.events, "events differ by chunking: \(whole.events) vs \(cut.events)")
        check(whole.retry == cut.retry, "retry differs by chunking")
    }
    // What the feed does with each event's data: decode it as an Event, which may fail but must not crash.
    for event in whole.events { _ = try? JSONCoding.decoder.decode(Event.self, from: Data(event.data.utf8)) }
}

/// An error answer: status from two bytes, a Retry-After from the next few, the rest the body.
private func fuzzErrorResponse(_ input: Data) {
    guard input.count > 4 else { return }
    let status = 400 + (Int(input[input.startIndex]) << 8 | Int(input[input.startIndex + 1])) % 200
    let retryLength = Int(input[input.startIndex + 2]) % 16
    let retry = String(decoding: input.dropFirst(3).prefix(retryLength), as: UTF8.self)
    let body = Data(input.dropFirst(3 + retryLength))
    let contentType = input[input.startIndex + 2] & 1 == 0 ? "application/problem+json" : "application/json"
    let response = APIResponse(
        status: status, headers: ["Content-Type": contentType, "Retry-After": retry, "Profirest-Request-Id": "req_1"],
        data: body)
    let factory = ErrorFactory(language: "en", redaction: Redaction(secrets: [secret]))
    let error = factory.fromResponse(response, now: fixedNow)
    check(!error.code.isEmpty, "an error without a code")
    check(error.status == status, "status \(error.status) instead of \(status)")
    if let seconds = error.retryAfter { check(seconds >= 0, "negative retryAfter \(seconds)") }
    let text = [error.description, error.debugDescription, error.localizedDescription, error.code, error.title,
                error.detail ?? "", "\(error.problem as Any)", "\(error.errors)", "\(error.candidates)",
                error.existingID ?? "", error.requestID ?? ""].joined(separator: "\n")
    check(!text.contains(secret), "the secret survived into the error: \(text)")
}

/// A 200 whose body is decoded into a few models and JSONValue.
private func fuzzModelResponse(_ input: Data) {
    let response = APIResponse(status: 200, headers: ["Content-Type": "application/json"], data: input)
    let factory = ErrorFactory(language: "cs", redaction: Redaction(secrets: [secret]))
    func attempt<T: Decodable>(_ model: T.Type) {
        do {
            _ = try ResponseDecoding.decode(model, from: response, errors: factory)
        } catch let error as ProfirestAPIError {
            check(error.code == ErrorCode.invalidResponse, "decoding \(T.self) failed with \(error.code)")
        } catch {
            check(false, "decoding \(T.self) threw \(type(of: error)) instead of a ProfirestAPIError")
        }
    }
    attempt(JSONValue.self)
    attempt(EventPage.self)
    attempt(StaffMemberPage.self)
    attempt(Order.self)
    attempt(Connection.self)
    attempt(TokenResponse.self)
}

private func fuzzStateDocument(_ input: Data) {
    let text = String(decoding: input, as: UTF8.self)
    do {
        let state = try StoredState.decode(text, location: "fuzz")
        let text = try state.encoded()
        let again = try StoredState.decode(text, location: "fuzz")
        check(again == state, "the state document does not survive a write and a read")
        // A cursor store replaces the cursors in the text written before: the same bytes as encoding it whole.
        var moved = state
        var changes: [String: String] = [:]
        for key in state.eventsCursor.keys {
            moved.eventsCursor[key] = key + "\"/\n"
            changes[key] = key + "\"/\n"
        }
        let replaced = JSONWriter.replacingTopLevelStrings(in: text, changes)
        let whole = try moved.encoded()
        check(replaced == nil || replaced == whole, "replacing the cursors of \(state) wrote another text")
        // Only a document JSONEncoder wrote (a decimal in another library's member) may be left to a full encoding.
        check(replaced != nil || !state.unknown.isEmpty, "the cursors of a written document could not be replaced")
    } catch is StorageError {
    } catch {
        check(false, "the state document failed with \(type(of: error)) instead of a StorageError")
    }
    _ = try? JSONDecoder().decode(PairingState.self, from: input)
}

private func fuzzDates(_ input: Data) {
    let text = String(decoding: input, as: UTF8.self)
    if let date = RFC3339.date(from: text) {
        let printed = RFC3339.string(from: date)
        let back = RFC3339.date(from: printed)
        check(back != nil, "\(printed) (from \(text)) does not parse")
        if let back { check(abs(back.timeIntervalSince(date)) < 0.001, "\(text) → \(printed) moved by \(back.timeIntervalSince(date)) s") }
    }
    if let seconds = RetryAfter.seconds(text, now: fixedNow) { check(seconds >= 0, "Retry-After \(text) gave \(seconds)") }
}

private func fuzzJSONValue(_ input: Data) {
    guard let value = try? JSONCoding.decoder.decode(JSONValue.self, from: input) else { return }
    do {
        let encoded = try JSONCoding.encode(value)
        let again = try JSONCoding.decoder.decode(JSONValue.self, from: encoded)
        check(again == value, "\(value) came back as \(again)")
        if let written = JSONWriter.write(value) {
            check(Data(written.utf8) == encoded, "JSONWriter wrote \(written), JSONEncoder \(String(decoding: encoded, as: UTF8.self))")
        }
    } catch {
        check(false, "\(value) does not survive encoding: \(error)")
    }
}

private func fuzzJSONReader(_ input: Data) {
    let old = try? JSONCoding.decoder.decode(JSONValue.self, from: input)
    if let new = try? JSONReader.value(from: input) {
        check(old.map { sameJSON($0, new) } ?? false, "JSONReader read \(new) where JSONDecoder read \(String(describing: old))")
    }
    input.withUnsafeBytes { raw in
        let bytes = raw.bindMemory(to: UInt8.self)
        let value = try? JSONValueDecoder.decode(JSONValue.self, from: bytes)
        check(old == nil && value == nil || old.flatMap { old in value.map { sameJSON(old, $0) } } == true,
              "JSONValueDecoder read \(String(describing: value)) where JSONDecoder read \(String(describing: old))")
        let oldEvent = try? JSONCoding.decoder.decode(Event.self, from: input)
        let newEvent = try? JSONValueDecoder.decode(Event.self, from: bytes)
        check(oldEvent == newEvent, "JSONValueDecoder decoded \(String(describing: newEvent)), JSONDecoder \(String(describing: oldEvent))")
    }
}

/// Equal and of the same kind: `.integer(1)` is not `.number(1.0)` here, and -0.0 is not 0.0.
private func sameJSON(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.integer(let x), .integer(let y)): return x == y
    case (.number(let x), .number(let y)): return x.bitPattern == y.bitPattern
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(sameJSON)
    case (.object(let x), .object(let y)):
        return x.count == y.count && x.allSatisfy { key, value in y[key].map { sameJSON(value, $0) } ?? false }
    case (.integer, _), (.number, _), (.array, _), (.object, _): return false
    default: return a == b
    }
}
