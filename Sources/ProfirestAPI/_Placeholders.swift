// TEMPORARY — deleted when main brings the real types (support branch: JSONValue, TokenStorage, UUIDv7;
// the lead's generator: ErrorCode, Problem and the models). Only the names and shapes the pipeline and the
// reference snippets need, so the pipeline compiles on its own. Not documented API; do not build on it.
import Foundation

public enum JSONValue: Sendable, Hashable, Codable, ExpressibleByNilLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    case null, bool(Bool), integer(Int), number(Double), string(String), array([JSONValue]), object([String: JSONValue])
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral v: Bool) { self = .bool(v) }
    public init(integerLiteral v: Int) { self = .integer(v) }
    public init(floatLiteral v: Double) { self = .number(v) }
    public init(stringLiteral v: String) { self = .string(v) }
    public init(arrayLiteral e: JSONValue...) { self = .array(e) }
    public init(dictionaryLiteral e: (String, JSONValue)...) { self = .object(Dictionary(e, uniquingKeysWith: { $1 })) }
    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    public var intValue: Int? {
        switch self { case .integer(let i): return i; case .number(let d): return Int(exactly: d); default: return nil }
    }
    public var doubleValue: Double? {
        switch self { case .integer(let i): return Double(i); case .number(let d): return d; default: return nil }
    }
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o }; return nil }
    public subscript(key: String) -> JSONValue? { objectValue?[key] }
    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null } else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let i = try? c.decode(Int.self) { self = .integer(i) } else if let d = try? c.decode(Double.self) { self = .number(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) } else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .integer(let i): try c.encode(i)
        case .number(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
    public init(encoding value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws {
        self = try JSONDecoder().decode(JSONValue.self, from: try encoder.encode(value))
    }
    public func decode<T: Decodable>(as type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(T.self, from: try JSONEncoder().encode(self))
    }
}

public protocol TokenStorage: Sendable {
    func get(_ key: String) throws -> String?
    func set(_ key: String, _ value: String) throws
    func remove(_ key: String) throws
}

public final class MemoryTokenStorage: TokenStorage, @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: String] = [:]
    public init() {}
    public func get(_ key: String) throws -> String? { lock.lock(); defer { lock.unlock() }; return values[key] }
    public func set(_ key: String, _ value: String) throws { lock.lock(); defer { lock.unlock() }; values[key] = value }
    public func remove(_ key: String) throws { lock.lock(); defer { lock.unlock() }; values[key] = nil }
}

enum UUIDv7 {
    private static let state = PlaceholderUUIDState()
    static func make(now: Date) -> String { state.next(now) }
}

final class PlaceholderUUIDState: @unchecked Sendable {
    private let lock = NSLock()
    private var last: UInt64 = 0
    func next(_ now: Date) -> String {
        lock.lock()
        let ms = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        // 48 bits of milliseconds then a 12-bit counter: strictly increasing within the process.
        let value = max(ms << 12, last + 1)
        last = value
        lock.unlock()
        let hex = String(value >> 12, radix: 16).leftPad(12) + String(value & 0xFFF, radix: 16).leftPad(3)
        let rand = (0..<4).map { _ in String(UInt32.random(in: 0...UInt32.max), radix: 16).leftPad(8) }.joined()
        let r = Array(rand)
        let variant = String("89ab".randomElement()!)
        return "\(hex.prefix(8))-\(hex.dropFirst(8).prefix(4))-7\(hex.suffix(3))-\(variant)\(String(r[0..<3]))-\(String(r[3..<15]))"
    }
}

extension String {
    fileprivate func leftPad(_ n: Int) -> String { String(repeating: "0", count: max(0, n - count)) + self }
}

public enum ErrorCode {
    public static let validationFailed = "validation_failed"
    public static let invalidToken = "invalid_token"
    public static let staffSessionExpired = "staff_session_expired"
    public static let staffAmbiguous = "staff_ambiguous"
    public static let staffCredentialsInvalid = "staff_credentials_invalid"
    public static let staffLocked = "staff_locked"
    public static let attendanceStateConflict = "attendance_state_conflict"
    public static let rateLimited = "rate_limited"
    public static let idempotencyInProgress = "idempotency_in_progress"
    public static let networkError = "network_error"
    public static let timeout = "timeout"
    public static let notPaired = "not_paired"
    public static let unexpectedRedirect = "unexpected_redirect"
    public static let staffSessionRequired = "staff_session_required"
    public static let invalidResponse = "invalid_response"
    public static let httpError = "http_error"
}

public struct FieldError: Codable, Hashable, Sendable { public var pointer: String; public var code: String; public var message: String }
public struct StaffCandidate: Codable, Hashable, Sendable { public var id: String; public var name: String; public var role: String? }
public struct Problem: Codable, Hashable, Sendable {
    public var type: String; public var title: String; public var status: Int; public var detail: String?
    public var instance: String?; public var code: String; public var requestId: String
    public var errors: [FieldError]?; public var candidates: [StaffCandidate]?; public var existingId: String?; public var retryAfter: Int?
    enum CodingKeys: String, CodingKey {
        case type, title, status, detail, instance, code, errors, candidates
        case requestId = "request_id", existingId = "existing_id", retryAfter = "retry_after"
    }
}
public struct StaffEmployee: Codable, Hashable, Sendable { public var id: String; public var name: String; public var role: String }
public struct StaffMember: Codable, Hashable, Sendable { public var id: String; public var name: String; public var role: String; public var active: Bool }
public struct StaffCredential: Codable, Hashable, Sendable {
    public var method: String; public var secret: String; public var employeeId: String?
    public init(method: String, secret: String, employeeId: String? = nil) { self.method = method; self.secret = secret; self.employeeId = employeeId }
    enum CodingKeys: String, CodingKey { case method, secret, employeeId = "employee_id" }
}
public struct AttendancePunchCreate: Codable, Hashable, Sendable {
    public var id: String; public var type: String; public var credential: StaffCredential?; public var occurredAt: String?
    public init(id: String, type: String, credential: StaffCredential? = nil, occurredAt: String? = nil) {
        self.id = id; self.type = type; self.credential = credential; self.occurredAt = occurredAt
    }
    enum CodingKeys: String, CodingKey { case id, type, credential, occurredAt = "occurred_at" }
}
public struct AttendancePunch: Codable, Hashable, Sendable { public var id: String; public var employee: StaffEmployee; public var state: String }
public struct AttendancePresence: Codable, Hashable, Sendable { public var employee: StaffEmployee; public var state: String; public var since: String }
public struct AttendancePresencePage: Codable, Hashable, Sendable, ProfirestPage {
    public var data: [AttendancePresence]; public var nextCursor: String?
    enum CodingKeys: String, CodingKey { case data, nextCursor = "next_cursor" }
}
public struct Catalog: Codable, Hashable, Sendable { public var restaurantId: String?; enum CodingKeys: String, CodingKey { case restaurantId = "restaurant_id" } }
public struct OrderCreate: Codable, Hashable, Sendable { public var channel: String; public init(channel: String) { self.channel = channel } }
public struct Order: Codable, Hashable, Sendable { public var id: String }
