import Foundation
import XCTest
@testable import ProfirestAPI

/// Header names are read without regard to case, ASCII ones byte by byte and any other as Foundation compares them.
final class HTTPHeadersTests: XCTestCase {
    func testNamesAreFoundWithoutRegardToCase() {
        let headers = ["Content-Type": "application/json", "x-request-id": "r1", "ETAG": "\"v1\""]
        XCTAssertEqual(HTTPHeaders.value("Content-Type", in: headers), "application/json")
        XCTAssertEqual(HTTPHeaders.value("content-type", in: headers), "application/json")
        XCTAssertEqual(HTTPHeaders.value("X-Request-ID", in: headers), "r1")
        XCTAssertEqual(HTTPHeaders.value("ETag", in: headers), "\"v1\"")
        XCTAssertNil(HTTPHeaders.value("Content-Typ", in: headers))
        XCTAssertNil(HTTPHeaders.value("Content-Type2", in: headers))
        // Only letters fold: "[" (0x5B) is not "{" (0x7B), "@" (0x40) is not "`" (0x60).
        XCTAssertFalse(HTTPHeaders.sameName("a[", "A{"))
        XCTAssertFalse(HTTPHeaders.sameName("@", "`"))
    }

    func testANameOutsideASCIIIsComparedAsFoundationDoes() {
        XCTAssertEqual(HTTPHeaders.value("x-ÄBC", in: ["X-äbc": "1"]), "1")
        XCTAssertEqual(HTTPHeaders.sameName("x-ÄBC", "X-äbc"), "x-ÄBC".caseInsensitiveCompare("X-äbc") == .orderedSame)
        XCTAssertFalse(HTTPHeaders.sameName("x-Ä", "x-a"))
    }
}
