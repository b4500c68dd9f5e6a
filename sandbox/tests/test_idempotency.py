"""Idempotency-Key: replay, another body, a request still running."""
import threading
import uuid

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
    import requests
    import time
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("first", api.call("POST", PUNCH, pos, json_body=b, headers=h,
                                                                        session=requests.Session())))
    t.start()
    time.sleep(0.25)
    second = api.call("POST", PUNCH, pos, json_body=b, headers=h, session=requests.Session())
    t.join()
    assert second.status_code == 409 and second.json()["code"] == "idempotency_in_progress"
    assert out["first"].status_code == 201
