"""Idempotency-Key: replay, another body, a request still running."""
import json
import threading
import time
import uuid

import requests

PUNCH = "/v2/restaurants/11/attendance/punches"


def body():
    return {"id": str(uuid.uuid4()), "type": "clock_in", "credential": {"method": "pin", "secret": "1234"}}


def test_same_key_same_body_replays(api, pos):
    b = body()
    h = {"Idempotency-Key": "punch-1"}
    first = api.call("POST", PUNCH, pos, json_body=b, headers=h)
    again = api.call("POST", PUNCH, pos, json_body=b, headers=h)
    assert first.status_code == again.status_code == 201 and first.json() == again.json()
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert api.admin("GET", "/stats")["idempotent_replays"] == 1


def test_same_key_other_body_is_rejected(api, pos):
    h = {"Idempotency-Key": "punch-2"}
    api.call("POST", PUNCH, pos, json_body=body(), headers=h)
    r = api.call("POST", PUNCH, pos, json_body=body(), headers=h)
    assert r.status_code == 422 and r.json()["code"] == "idempotency_key_reused"


def test_errors_are_replayed_but_auth_failures_are_not(api, pos):
    h = {"Idempotency-Key": "quote-1"}
    q = {"channel": "eshop", "items": [{"product_id": "prod_smazak", "quantity": 1}], "fulfillment": {"type": "pickup"}}
    r1 = api.call("POST", "/v2/restaurants/11/quotes", pos, json_body=q, headers=h)
    r2 = api.call("POST", "/v2/restaurants/11/quotes", pos, json_body=q, headers=h)
    assert r1.json()["code"] == r2.json()["code"] == "product_unavailable" and r2.headers["Idempotent-Replayed"]
    r = api.call("POST", "/v2/restaurants/11/quotes", "wrong-token", json_body=q, headers={"Idempotency-Key": "q2"})
    assert r.status_code == 401
    ok = {**q, "items": [{"product_id": "prod_gulas", "quantity": 1}]}
    assert api.call("POST", "/v2/restaurants/11/quotes", pos, json_body=ok, headers={"Idempotency-Key": "q2"}).status_code == 201


def test_in_progress_while_handler_runs(api, pos):
    # the server holds keyed requests 600 ms (a test setting), so the second one arrives while the first runs
    api.admin("POST", "/config", {"idempotency_hold_ms": 600})
    b = body()
    h = {"Idempotency-Key": "held-1"}
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("first", api.call("POST", PUNCH, pos, json_body=b, headers=h,
                                                                        session=requests.Session())))
    t.start()
    time.sleep(0.25)
    second = api.call("POST", PUNCH, pos, json_body=b, headers=h, session=requests.Session())
    t.join()
    assert second.status_code == 409 and second.json()["code"] == "idempotency_in_progress"
    assert out["first"].status_code == 201


def raw_post(api, token, path, data: bytes, key: str, session=None):
    """Exact bytes under a key, as a broken HTTP client may re-send them (or not send them at all)."""
    headers = {"Idempotency-Key": key}
    if data:
        headers["Content-Type"] = "application/json"
    return api.call("POST", path, token, data=data, headers=headers, session=session)


def test_known_key_is_checked_before_the_body(api, pos):
    raw = json.dumps(body()).encode()
    assert raw_post(api, pos, PUNCH, raw, "bytes-1").status_code == 201
    for other in (b"", b"{", b'{"id": 1}', raw + b" "):
        r = raw_post(api, pos, PUNCH, other, "bytes-1")
        assert r.status_code == 422 and r.json()["code"] == "idempotency_key_reused", (other, r.text)
    again = raw_post(api, pos, PUNCH, raw, "bytes-1")
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert api.admin("GET", "/stats")["body_mismatch_under_key"] == 4


def test_a_rejected_body_does_not_take_the_key(api, pos):
    # validation errors are not recorded: the same key with the fixed body still runs
    r = raw_post(api, pos, PUNCH, b'{"type": "clock_in"}', "fixed-1")
    assert r.status_code == 422 and r.json()["code"] == "validation_failed"
    assert raw_post(api, pos, PUNCH, json.dumps(body()).encode(), "fixed-1").status_code == 201
    # ...but the sandbox still saw two bodies under one key
    assert api.admin("GET", "/stats")["body_mismatch_under_key"] == 1


def held_first(api, pos, raw: bytes, key: str) -> tuple[threading.Thread, dict]:
    """Start a keyed request the server holds 600 ms (a test setting); the caller sends a second one meanwhile."""
    api.admin("POST", "/config", {"idempotency_hold_ms": 600})
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("first", raw_post(api, pos, PUNCH, raw, key,
                                                                         session=requests.Session())))
    t.start()
    time.sleep(0.25)
    return t, out


def test_other_bytes_while_the_key_runs_are_reused(api, pos):
    raw = json.dumps(body()).encode()
    t, out = held_first(api, pos, raw, "held-2")
    other = raw_post(api, pos, PUNCH, b"", "held-2", session=requests.Session())
    same = raw_post(api, pos, PUNCH, raw, "held-2", session=requests.Session())
    t.join()
    assert other.status_code == 422 and other.json()["code"] == "idempotency_key_reused"
    assert same.status_code == 409 and same.json()["code"] == "idempotency_in_progress"
    assert out["first"].status_code == 201
    assert api.admin("GET", "/stats")["body_mismatch_under_key"] == 1


def customer(email: str) -> dict:
    return {"name": "Soak Test", "email": email}


def test_commits_are_counted_per_connection_and_key(api):
    tok = api.token()
    pos, conn = tok["access_token"], tok["device_id"]
    h1, h2 = {"Idempotency-Key": "cus-1"}, {"Idempotency-Key": "cus-2"}
    assert api.call("POST", "/v2/customers", pos, json_body=customer("a@example.cz"), headers=h1).status_code == 201
    assert api.call("POST", "/v2/customers", pos, json_body=customer("a@example.cz"), headers=h1).status_code == 201
    # the sandbox does not de-duplicate customers by content: a new key is a second customer, and it shows
    assert api.call("POST", "/v2/customers", pos, json_body=customer("b@example.cz"), headers=h2).status_code == 201
    assert api.call("POST", "/v2/customers", pos, json_body=customer("c@example.cz")).status_code == 201
    # an error is no commit
    assert api.call("POST", "/v2/customers", pos, json_body=customer("c@example.cz"),
                    headers={"Idempotency-Key": "cus-3"}).status_code == 409
    summary = api.admin("GET", "/commits")
    assert summary == {"keys": 2, "commits": 2, "duplicated_keys": 0, "unkeyed": 1,
                       "by_operation": {"createCustomer": 3},
                       "punches": {"ids": 0, "requests": 0, "duplicated_ids": 0}}
    full = api.admin("GET", "/commits?full=1")
    assert full["by_key"] == {conn: {"cus-1": 1, "cus-2": 1}} and full["punch_requests"] == {}
    assert api.admin("GET", "/stats")["commits"] == summary
    assert api.admin("DELETE", "/commits")["commits"] == 0
    assert api.admin("GET", "/commits?full=1")["by_key"] == {}


def test_a_write_that_runs_twice_under_one_key_is_visible(api):
    # a key whose record expired runs again: the ledger counts the second commit under the same key
    tok = api.token()
    pos, conn = tok["access_token"], tok["device_id"]
    api.admin("POST", "/config", {"idempotency_ttl": 0})
    h = {"Idempotency-Key": "cus-twice"}
    assert api.call("POST", "/v2/customers", pos, json_body=customer("t@example.cz"), headers=h).status_code == 201
    time.sleep(1.1)
    assert api.call("POST", "/v2/customers", pos, json_body=customer("u@example.cz"), headers=h).status_code == 201
    full = api.admin("GET", "/commits?full=1")
    assert full["by_key"][conn]["cus-twice"] == 2 and full["duplicated_keys"] == 1


def test_punch_requests_are_counted_per_punch_id(api, pos):
    b = body()
    assert api.call("POST", PUNCH, pos, json_body=b, headers={"Idempotency-Key": "p-1"}).status_code == 201
    api.call("POST", PUNCH, pos, json_body=b, headers={"Idempotency-Key": "p-1"})  # a replay: the handler did not run
    assert api.admin("GET", "/commits")["punches"] == {"ids": 1, "requests": 1, "duplicated_ids": 0}
    # the same punch under a fresh key: still one punch, but the doubled request shows
    assert api.call("POST", PUNCH, pos, json_body=b, headers={"Idempotency-Key": "p-2"}).status_code == 200
    full = api.admin("GET", "/commits?full=1")
    assert full["punch_requests"] == {b["id"]: 2} and full["punches"]["duplicated_ids"] == 1
    assert full["by_operation"] == {"createAttendancePunch": 2}
    assert api.admin("GET", "/stats")["punches_recorded"] == 1
