import Foundation
import XCTest
@testable import ProfirestAPI

final class RFC3339Tests: XCTestCase {
    func testParsesTheFormsOfRFC3339() throws {
        XCTAssertEqual(RFC3339.date(from: "1970-01-01T00:00:00Z")?.timeIntervalSince1970, 0)
        XCTAssertEqual(RFC3339.date(from: "2026-11-29T07:58:12Z")?.timeIntervalSince1970, 1_795_939_092)
        XCTAssertEqual(RFC3339.date(from: "2026-11-29T08:58:12+01:00")?.timeIntervalSince1970, 1_795_939_092)
        XCTAssertEqual(RFC3339.date(from: "2026-11-29t07:58:12z")?.timeIntervalSince1970, 1_795_939_092)
        XCTAssertEqual(try XCTUnwrap(RFC3339.date(from: "2026-11-29T07:58:12.123456-00:30")).timeIntervalSince1970, 1_795_940_892.123456, accuracy: 1e-6)
        XCTAssertEqual(RFC3339.date(from: "2024-02-29T23:59:60Z")?.timeIntervalSince1970, 1_709_251_199, "a leap second reads as :59")
        XCTAssertEqual(RFC3339.date(from: "1969-12-31T23:59:59Z")?.timeIntervalSince1970, -1)
    }

    func testRejectsWhatIsNotRFC3339() {
        for text in ["", "2026-11-29", "2026-11-29T07:58Z", "2026-13-01T00:00:00Z", "2025-02-29T00:00:00Z", "2026-11-29T24:00:00Z",
                     "2026-11-29T07:58:12", "2026-11-29T07:58:12.Z", "2026-11-29T07:58:12+0100", "2026-11-29T07:58:12Z ", "0000-01-01T00:00:00Z",
                     "２０２６-11-29T07:58:12Z", "yesterday"] {
            XCTAssertNil(RFC3339.date(from: text), text)
        }
    }

    func testFormatsInUTCWithMillisecondsOnlyWhenNeeded() {
        XCTAssertEqual(RFC3339.string(from: Date(timeIntervalSince1970: 1_795_939_092)), "2026-11-29T07:58:12Z")
        XCTAssertEqual(RFC3339.string(from: Date(timeIntervalSince1970: 1_795_939_092.25)), "2026-11-29T07:58:12.250Z")
        XCTAssertEqual(RFC3339.string(from: Date(timeIntervalSince1970: -0.5)), "1969-12-31T23:59:59.500Z")
        XCTAssertEqual(RFC3339.string(from: Date(timeIntervalSince1970: 951_782_400)), "2000-02-29T00:00:00Z")
    }

    func testRoundTripsOverCenturies() {
        var seconds = -2_208_988_800.0 // 1900
        while seconds < 4_102_444_800 { // 2100
            let text = RFC3339.string(from: Date(timeIntervalSince1970: seconds))
            XCTAssertEqual(RFC3339.date(from: text)?.timeIntervalSince1970, seconds, text)
            seconds += 86_400 * 37 + 3_607.125
        }
    }
}
