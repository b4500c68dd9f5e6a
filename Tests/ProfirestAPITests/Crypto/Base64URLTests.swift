import XCTest
@testable import ProfirestAPI

final class Base64URLTests: XCTestCase {
    func testEncodesWithoutPaddingInTheURLAlphabet() {
        XCTAssertEqual(Base64URL.encode(Data()), "")
        XCTAssertEqual(Base64URL.encode(Data("f".utf8)), "Zg")
        XCTAssertEqual(Base64URL.encode(Data("fo".utf8)), "Zm8")
        XCTAssertEqual(Base64URL.encode(Data("foo".utf8)), "Zm9v")
        XCTAssertEqual(Base64URL.encode(Data([0xfb, 0xff, 0xbf])), "-_-_")
    }

    func testDecodesWithOrWithoutPadding() {
        XCTAssertEqual(Base64URL.decode("Zg"), Data("f".utf8))
        XCTAssertEqual(Base64URL.decode("Zg=="), Data("f".utf8))
        XCTAssertEqual(Base64URL.decode("Zm8"), Data("fo".utf8))
        XCTAssertEqual(Base64URL.decode("Zm8="), Data("fo".utf8))
        XCTAssertEqual(Base64URL.decode("-_-_"), Data([0xfb, 0xff, 0xbf]))
        XCTAssertEqual(Base64URL.decode(""), Data())
    }

    func testRejectsInvalidInput() {
        for bad in ["Zm9v+", "Zm9v/", "Zm 9v", "Zm9v\n", "Z", "Zm9vZ", "Zg=", "Z===", "Zm=8", "=Zm8", "Zm9vé"] {
            XCTAssertNil(Base64URL.decode(bad), bad)
        }
    }

    func testRoundTripsEveryLength() {
        for length in 0..<70 {
            let data = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
            let encoded = Base64URL.encode(data)
            XCTAssertFalse(encoded.contains("="))
            XCTAssertEqual(Base64URL.decode(encoded), data)
        }
    }
}
