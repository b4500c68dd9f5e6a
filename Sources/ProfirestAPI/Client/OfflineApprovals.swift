import Foundation

/// A manager's approval of a receipt on a register without a network (contract: `OfflineApproval`,
/// `ReceiptOfflineApproval`).
///
/// The manager's `offline_approval` data (salt, iterations, check) comes with the staff list while online. Offline,
/// the manager types the PIN: `verifyPin` catches typos (the check has only 8 bits, so 1 wrong PIN in 256 passes),
/// and `sign` computes the `approval_signature` that the server verifies when the receipt is sent. The PIN is never
/// stored, and no error or description contains it.
///
/// ```swift
/// receipt.offlineApproval = ReceiptOfflineApproval(employeeId: "emp_1", reason: "storno", approvedAt: "2026-11-29T12:10:00Z", approvalSignature: "")
/// receipt.offlineApproval?.approvalSignature = try OfflineApprovals.sign(manager.offlineApproval!, pin: pin, receipt: receipt)
/// ```
public enum OfflineApprovals {
    private static let checkLabel = Data("profirest-offline-check".utf8)
    private static let messagePrefix = "profirest-offline-approval/1"
    /// The contract's bounds; a larger count from a tampered staff list would freeze the register.
    private static let iterationRange = 1000...600_000

    /// True when `pin` passes the manager's 8-bit typo check.
    ///
    /// - Parameters:
    ///   - approval: the manager's `offline_approval` from the staff list (salt, iterations, check).
    ///   - pin: the PIN the manager typed; it is never stored.
    /// - Returns: true when the PIN passes the check; false when it does not, or the approval data is unusable.
    ///
    /// ```swift
    /// guard OfflineApprovals.verifyPin(data, pin: pin) else { askAgain() }
    /// ```
    public static func verifyPin(_ approval: OfflineApproval, pin: String) -> Bool {
        guard let key = try? key(approval, pin: pin) else { return false }
        return checkByte(key) == approval.check
    }

    /// The `approval_signature` for `receipt`, whose `offline_approval` names the manager, time and reason:
    /// base64url (no padding) of HMAC-SHA256(key, `message(receipt)`). Throws when the PIN fails the check, the
    /// receipt has no `offline_approval`, or the approval data is unusable.
    ///
    /// - Parameters:
    ///   - approval: the manager's `offline_approval` from the staff list (salt, iterations, check).
    ///   - pin: the PIN the manager typed; it is never stored.
    ///   - receipt: the receipt to approve, its `offlineApproval` set (employee, reason, `approvedAt`).
    /// - Returns: the `approval_signature`, to set on the receipt's `offlineApproval`.
    /// - Throws: ``ProfirestUsageError`` when the PIN fails the check, the receipt has no `offlineApproval`, or the
    ///   approval data is unusable (reload the staff list).
    ///
    /// ```swift
    /// receipt.offlineApproval?.approvalSignature = try OfflineApprovals.sign(data, pin: pin, receipt: receipt)
    /// ```
    public static func sign(_ approval: OfflineApproval, pin: String, receipt: ReceiptCreate) throws -> String {
        let text = try message(receipt)
        let key = try key(approval, pin: pin)
        guard checkByte(key) == approval.check else {
            throw ProfirestUsageError(
                "The PIN does not pass the manager's offline check; let the manager enter it again.")
        }
        return Base64URL.encode(Crypto.hmacSHA256(key: key, message: Data(text.utf8)))
    }

    /// The signed text: `profirest-offline-approval/1`, receipt id, employee_id, approved_at, reason, total amount in
    /// minor units, total currency — joined by line feeds, without a trailing one. Throws without `offline_approval`.
    ///
    /// - Parameter receipt: the receipt, its `offlineApproval` set.
    /// - Returns: the text the signature is computed over.
    /// - Throws: ``ProfirestUsageError`` when the receipt has no `offlineApproval`.
    ///
    /// ```swift
    /// let text = try OfflineApprovals.message(receipt)
    /// ```
    public static func message(_ receipt: ReceiptCreate) throws -> String {
        guard let approval = receipt.offlineApproval else {
            throw ProfirestUsageError(
                "The receipt has no offline_approval: set employeeId, reason and approvedAt (RFC 3339 UTC, whole "
                    + "seconds) before signing.")
        }
        return [
            messagePrefix, receipt.id, approval.employeeId, approval.approvedAt, approval.reason,
            String(receipt.total.amount), receipt.total.currency,
        ].joined(separator: "\n")
    }

    /// PBKDF2-HMAC-SHA256(PIN as UTF-8, base64url-decoded salt, iterations, 32 bytes).
    private static func key(_ approval: OfflineApproval, pin: String) throws -> Data {
        guard let salt = Base64URL.decode(approval.salt), !salt.isEmpty else {
            throw ProfirestUsageError("The manager's offline_approval.salt is not base64url; reload the staff list.")
        }
        guard iterationRange.contains(approval.iterations) else {
            throw ProfirestUsageError(
                "The manager's offline_approval.iterations (\(approval.iterations)) is outside 1000–600000; "
                    + "reload the staff list.")
        }
        return Crypto.pbkdf2SHA256(
            password: Data(pin.utf8), salt: salt, iterations: approval.iterations, keyLength: 32)
    }

    private static func checkByte(_ key: Data) -> Int {
        Int(Crypto.hmacSHA256(key: key, message: checkLabel)[0])
    }
}
