"""The offline approval math (contract: OfflineApproval, ReceiptOfflineApproval) with a fixed vector.

The Swift side asserts the same numbers: OFFLINE_APPROVAL_VECTOR is the test vector (cross-checked with openssl)."""
import uuid

from sandbox import offline

OFFLINE_APPROVAL_VECTOR = {
    "pin": "1234",
    "salt": "cHJvZmlyZXN0LWphbmEtMQ",  # base64url of b"profirest-jana-1" (Jana Nováková, emp_1, the seed data)
    "iterations": 20000,
    "key_hex": "ad8b12fc38cd2aa0ff45aa2e48c8fd8bad773e88172cc7e889e26cb33cbe6ab2",
    "check": 153,
    "receipt_id": "01936f60-1c2d-7e3f-8a4b-5c6d7e8f9a0b",
    "employee_id": "emp_1",
    "approved_at": "2026-11-29T12:10:00Z",
    "reason": "storno položky",
    "total_amount": 37800,
    "total_currency": "CZK",
    "message": "profirest-offline-approval/1\n01936f60-1c2d-7e3f-8a4b-5c6d7e8f9a0b\nemp_1\n2026-11-29T12:10:00Z\n"
               "storno položky\n37800\nCZK",
    "approval_signature": "ROz8paqshHNx6Cp7xlXin9NkHY7eOKSCfmIKfigEuuY",
    # the same approval for a refund of -5 Kč with the reason "vratka"
    "negative_amount": -500,
    "negative_reason": "vratka",
    "negative_signature": "Nvfjo96lA4X7L4jMDxbcLgwewHeaKtwJ7lWZNEKfR8M",
}
V = OFFLINE_APPROVAL_VECTOR


def test_vector():
    key = offline.derive_key(V["pin"], V["salt"], V["iterations"])
    assert key.hex() == V["key_hex"]
    assert offline.check_byte(key) == V["check"]
    msg = offline.message(V["receipt_id"], V["employee_id"], V["approved_at"], V["reason"], V["total_amount"],
                          V["total_currency"])
    assert msg == V["message"].encode()
    assert offline.signature(key, msg) == V["approval_signature"]
    neg = offline.message(V["receipt_id"], V["employee_id"], V["approved_at"], V["negative_reason"],
                          V["negative_amount"], V["total_currency"])
    assert offline.signature(key, neg) == V["negative_signature"]


def test_staff_list_publishes_the_managers_offline_data(api, pos):
    staff = api.call("GET", "/v2/restaurants/11/staff", pos).json()["data"]
    jana = next(s for s in staff if s["id"] == "emp_1")
    assert jana["offline_approval"] == {"salt": V["salt"], "iterations": V["iterations"], "check": V["check"]}
    assert all("offline_approval" not in s for s in staff if s["role"] != "manager")


def receipt(rid, approval=None, total=37800, tab_id=None):
    body = {"id": rid, "items": [{"name": "Svíčková na smetaně", "quantity": 2,
                                  "unit_price": {"amount": total // 2, "currency": "CZK"}, "vat_rate": 12}],
            "total": {"amount": total, "currency": "CZK"}, "payment_method": "card",
            "issued_at": "2026-11-29T12:10:05Z"}
    if approval:
        body["offline_approval"] = approval
    if tab_id:
        body["tab_id"] = tab_id
    return body


def test_server_verifies_the_signature(api, pos):
    waiter = api.call("POST", "/v2/restaurants/11/staff/sessions", pos,
                      json_body={"method": "pin", "secret": "2222", "employee_id": "emp_2"}).json()["token"]
    h = {"Profirest-Staff-Token": waiter}
    good = {"employee_id": "emp_1", "reason": V["reason"], "approved_at": V["approved_at"],
            "approval_signature": V["approval_signature"]}
    r = api.call("POST", "/v2/restaurants/11/receipts", pos, json_body=receipt(V["receipt_id"], good), headers=h)
    assert r.status_code == 201, r.text
    assert r.json()["approved_by"]["id"] == "emp_1" and r.json()["issued_by"]["id"] == "emp_2"
    bad = {**good, "approval_signature": "A" * 43}
    r = api.call("POST", "/v2/restaurants/11/receipts", pos, json_body=receipt(str(uuid.uuid4()), bad), headers=h)
    assert r.status_code == 422 and r.json()["code"] == "offline_approval_invalid"
    r = api.call("POST", "/v2/restaurants/11/receipts", pos,
                 json_body=receipt(str(uuid.uuid4()), {**good, "employee_id": "emp_2"}), headers=h)
    assert r.json()["code"] == "offline_approval_invalid"
