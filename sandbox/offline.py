"""Offline approval of receipts by a manager's PIN (contract: OfflineApproval, ReceiptOfflineApproval)."""
from __future__ import annotations

import base64
import hashlib
import hmac

CHECK_LABEL = b"profirest-offline-check"
MESSAGE_PREFIX = "profirest-offline-approval/1"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def derive_key(pin: str, salt_b64url: str, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", pin.encode("utf-8"), b64url_decode(salt_b64url), iterations, 32)


def check_byte(key: bytes) -> int:
    return hmac.new(key, CHECK_LABEL, hashlib.sha256).digest()[0]


def message(receipt_id: str, employee_id: str, approved_at: str, reason: str, amount: int, currency: str) -> bytes:
    return "\n".join([MESSAGE_PREFIX, receipt_id, employee_id, approved_at, reason, str(amount), currency]).encode("utf-8")


def signature(key: bytes, msg: bytes) -> str:
    return b64url(hmac.new(key, msg, hashlib.sha256).digest())


def verify(key: bytes, msg: bytes, sig: str) -> bool:
    return hmac.compare_digest(signature(key, msg), sig)
