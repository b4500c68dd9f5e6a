import XCTest
@testable import ProfirestAPI

/// The vector of sandbox/tests/test_offline_approval.py (OFFLINE_APPROVAL_VECTOR), re-checked with Python's
/// hashlib/hmac: the library and the sandbox server must agree on every number.
final class OfflineApprovalsTests: XCTestCase {
    private let jana = OfflineApproval(salt: "cHJvZmlyZXN0LWphbmEtMQ", iterations: 20000, check: 153)

    private func receipt(amount: Int = 37800, reason: String = "storno položky", approval: Bool = true) -> ReceiptCreate {
        ReceiptCreate(
            id: "01936f60-1c2d-7e3f-8a4b-5c6d7e8f9a0b",
            items: [ReceiptItem(name: "Svíčková na smetaně", quantity: 2, unitPrice: Money(amount: amount / 2, currency: "CZK"), vatRate: 12)],
            total: Money(amount: amount, currency: "CZK"), paymentMethod: "card",
            offlineApproval: approval
                ? ReceiptOfflineApproval(employeeId: "emp_1", reason: reason, approvedAt: "2026-11-29T12:10:00Z", approvalSignature: "")
                : nil)
    }

    func testKeyAndCheckMatchTheVector() {
        let key = Crypto.pbkdf2SHA256(
            password: Data("1234".utf8), salt: Data("profirest-jana-1".utf8), iterations: 20000, keyLength: 32)
        XCTAssertEqual(key.hex, "ad8b12fc38cd2aa0ff45aa2e48c8fd8bad773e88172cc7e889e26cb33cbe6ab2")
        XCTAssertTrue(OfflineApprovals.verifyPin(jana, pin: "1234"))
        XCTAssertFalse(OfflineApprovals.verifyPin(jana, pin: "1235"))
    }

    func testMessageIsTheContractsLines() throws {
        XCTAssertEqual(
            try OfflineApprovals.message(receipt()),
            "profirest-offline-approval/1\n01936f60-1c2d-7e3f-8a4b-5c6d7e8f9a0b\nemp_1\n2026-11-29T12:10:00Z\n"
                + "storno položky\n37800\nCZK")
    }

    func testSignatureMatchesTheVector() throws {
        XCTAssertEqual(try OfflineApprovals.sign(jana, pin: "1234", receipt: receipt()), "ROz8paqshHNx6Cp7xlXin9NkHY7eOKSCfmIKfigEuuY")
        XCTAssertEqual(
            try OfflineApprovals.sign(jana, pin: "1234", receipt: receipt(amount: -500, reason: "vratka")),
            "Nvfjo96lA4X7L4jMDxbcLgwewHeaKtwJ7lWZNEKfR8M")
    }

    func testWrongPinThrowsWithoutShowingIt() {
        XCTAssertThrowsError(try OfflineApprovals.sign(jana, pin: "98765", receipt: receipt())) { error in
            XCTAssertTrue(error is ProfirestUsageError)
            XCTAssertFalse(String(describing: error).contains("98765"))
            XCTAssertFalse(error.localizedDescription.contains("98765"))
        }
    }

    func testReceiptWithoutApprovalThrows() {
        XCTAssertThrowsError(try OfflineApprovals.message(receipt(approval: false)))
        XCTAssertThrowsError(try OfflineApprovals.sign(jana, pin: "1234", receipt: receipt(approval: false))) {
            XCTAssertTrue(String(describing: $0).contains("offline_approval"))
        }
    }

    func testBadSaltOrIterationsThrowAndFailTheCheck() {
        for bad in [OfflineApproval(salt: "not base64!", iterations: 20000, check: 153),
                    OfflineApproval(salt: jana.salt, iterations: 5_000_000, check: 153)] {
            XCTAssertFalse(OfflineApprovals.verifyPin(bad, pin: "1234"))
            XCTAssertThrowsError(try OfflineApprovals.sign(bad, pin: "1234", receipt: receipt())) {
                XCTAssertFalse(String(describing: $0).contains("1234"))
            }
        }
    }
}
