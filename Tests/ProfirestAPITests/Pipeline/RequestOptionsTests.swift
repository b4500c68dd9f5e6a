import Foundation
import XCTest
@testable import ProfirestAPI

/// `RequestOptions.swift`: the per-request options and their kinds (`IdempotencyKey`, `Staff`, `Auth`), their
/// defaults and literals, and what `print`, `debugPrint`, `dump` and a mirror show of them — every setting, never a
/// token. (How the options shape a request: ProfirestRequestTests, CoreTokenTests.)
final class RequestOptionsTests: XCTestCase {
    static let bearer = "at_SECRET_option_3f8e1c07"
    static let staff = "st_SECRET_option_b42d9e6a"
    static let apiKey = "key_SECRET_option_71ac0d3f"

    func testAnIdempotencyKeyWrittenAsAStringIsTheCallersKey() {
        let option: RequestOptions.IdempotencyKey = "order-42"
        XCTAssertEqual(option, .key("order-42"))
        XCTAssertEqual(RequestOptions(idempotencyKey: "k1").idempotencyKey, .key("k1"))
        XCTAssertNotEqual(option, .key("order-43"))
        XCTAssertNotEqual(RequestOptions.IdempotencyKey.auto, .none)
    }

    func testEveryOptionLeftOutKeepsTheClientsBehaviour() {
        let options = RequestOptions()
        XCTAssertEqual(options.query, [:])
        XCTAssertEqual(options.idempotencyKey, .auto)
        XCTAssertNil(options.ifMatch)
        XCTAssertNil(options.ifNoneMatch)
        XCTAssertEqual(options.staff, .auto)
        XCTAssertNil(options.retries)
        XCTAssertNil(options.timeout)
        XCTAssertNil(options.accept)
        XCTAssertNil(options.contentType)
        XCTAssertEqual(options.headers, [:])
        XCTAssertEqual(options.auth, .auto)
    }

    func testOptionsAreValuesComparedByEverySetting() {
        let options = RequestOptions(query: ["limit": 5], staff: .token("a-token-aaaa"), retries: 1, auth: .bearer("b-token-bbbb"))
        XCTAssertEqual(options, RequestOptions(query: ["limit": 5], staff: .token("a-token-aaaa"), retries: 1, auth: .bearer("b-token-bbbb")))
        XCTAssertNotEqual(options, RequestOptions(query: ["limit": 5], staff: .token("a-token-cccc"), retries: 1, auth: .bearer("b-token-bbbb")))
        XCTAssertNotEqual(options, RequestOptions(query: ["limit": 6], staff: .token("a-token-aaaa"), retries: 1, auth: .bearer("b-token-bbbb")))
        XCTAssertNotEqual(RequestOptions(timeout: 10), RequestOptions())
        XCTAssertEqual(Set([RequestOptions(), RequestOptions(), RequestOptions(staff: .required)]).count, 2)
    }

    func testTheAuthAndStaffOptionsDescribeThemselvesWithoutTheirTokens() {
        let auth: [(RequestOptions.Auth, String)] = [(.auto, "auto"), (.none, "none"), (.bearer(Self.bearer), "bearer(<redacted>)")]
        for (option, expected) in auth {
            XCTAssertEqual(option.description, expected)
            XCTAssertEqual(option.debugDescription, expected)
            XCTAssertEqual("\(option)", expected)
            XCTAssertTrue(Mirror(reflecting: option).children.isEmpty, "no children for dump to walk into")
            XCTAssertFalse(dumped(option).contains(Self.bearer), dumped(option))
        }
        let staff: [(RequestOptions.Staff, String)] = [
            (.auto, "auto"), (.required, "required"), (.none, "none"), (.token(Self.staff), "token(<redacted>)"),
        ]
        for (option, expected) in staff {
            XCTAssertEqual(option.description, expected)
            XCTAssertEqual(option.debugDescription, expected)
            XCTAssertEqual(String(reflecting: option), expected)
            XCTAssertTrue(Mirror(reflecting: option).children.isEmpty)
            XCTAssertFalse(dumped(option).contains(Self.staff), dumped(option))
        }
    }

    func testTheOptionsShowEverySettingButNoToken() {
        let options = RequestOptions(
            query: ["channel": "pos"], idempotencyKey: "order-42", ifMatch: "\"v1\"", staff: .token(Self.staff), retries: 2,
            timeout: 120, accept: "application/zip", contentType: "application/merge-patch+json",
            headers: ["X-Api-Key": Self.apiKey, "X-Trace": "trace-42"], auth: .bearer(Self.bearer))
        let description = options.description
        XCTAssertTrue(description.hasPrefix("RequestOptions(query: "), description)
        for shown in ["pos", "order-42", "\\\"v1\\\"", "token(<redacted>)", "120", "application/zip", "application/merge-patch+json",
                      "\"X-Api-Key\": <redacted>", "\"X-Trace\": \"trace-42\"", "auth: bearer(<redacted>)"] {
            XCTAssertTrue(description.contains(shown), "\(shown) in \(description)")
        }
        XCTAssertEqual(options.debugDescription, description)
        XCTAssertEqual("\(options)", description)
        XCTAssertEqual(String(reflecting: options), description)
        XCTAssertEqual(
            Mirror(reflecting: options).children.map(\.label),
            ["query", "idempotencyKey", "ifMatch", "ifNoneMatch", "staff", "retries", "timeout", "maxResponseBytes", "accept",
             "contentType", "headers", "auth"])
        let dump = dumped(options)
        XCTAssertTrue(dump.contains("trace-42"), dump)
        for text in [description, dump] {
            for secret in [Self.bearer, Self.staff, Self.apiKey] {
                XCTAssertFalse(text.contains(secret), "\(secret) in \(text)")
            }
        }
    }

    private func dumped<T>(_ value: T) -> String {
        var text = ""
        dump(value, to: &text)
        return text
    }
}
