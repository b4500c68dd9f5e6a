"""The console's JSON admin API: the request log (attempts, replays, problems, staff sessions, never a secret),
the recent events with their readers, the connections with their tokens, and removing one fault."""
import json
import uuid

SESS = "/v2/restaurants/11/staff/sessions"
PUNCH = "/v2/restaurants/11/attendance/punches"


def strings(value):
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, str):
        yield value


def test_request_log_never_shows_a_token_or_pin(api):
    tok = api.token()
    at = tok["access_token"]
    s = api.call("POST", SESS, at, json_body={"method": "pin", "secret": "1234"}).json()
    staff = s["token"]
    wrong = api.call("POST", SESS, at, json_body={"method": "pin", "secret": "731946285"})
    assert wrong.status_code == 401
    api.call("GET", "/v2/staff/sessions/current", at, headers={"Profirest-Staff-Token": staff})
    api.form("/oauth/token", {"grant_type": "refresh_token", "refresh_token": tok["refresh_token"],
                              "client_id": "profirest-pos"})
    api.call("GET", "/v2/connection?access_token=" + at, at)
    out = api.admin("GET", "/requests?limit=500")
    text = json.dumps(out)
    for secret in (at, staff, tok["refresh_token"], "731946285"):
        assert secret not in text
    assert "1234" not in list(strings(out))
    rows = out["data"]
    current = next(r for r in rows if r["path"] == "/v2/staff/sessions/current")
    assert current["connection"] == tok["device_id"] and current["status"] == 200
    assert current["token"] == "…" + at[-4:]
    assert current["staff_session"].startswith("ss#") and staff[-4:] not in current["staff_session"]
    failed = [r for r in rows if r["path"] == SESS][-1]
    assert failed["status"] == 401 and failed["problem"] == "staff_credentials_invalid"
    assert failed["duration_ms"] is not None
    query = next(r for r in rows if r["path"] == "/v2/connection")["query"]
    assert query == "access_token=%E2%80%A6" + at[-4:] or query.endswith(at[-4:]), query


def test_attempts_replays_and_connection_filter(api):
    a, b = api.token(), api.token()
    key = str(uuid.uuid4())
    punch = {"id": str(uuid.uuid4()), "type": "clock_in", "credential": {"method": "pin", "secret": "3333"}}
    api.admin("POST", "/faults", {"path": PUNCH, "action": "drop_after", "count": 1})
    for _ in range(3):
        try:
            api.call("POST", PUNCH, a["access_token"], json_body=punch, headers={"Idempotency-Key": key})
        except Exception:  # noqa: BLE001 — the dropped first attempt
            pass
    api.call("GET", "/v2/connection", b["access_token"])
    rows = api.admin("GET", f"/requests?connection={a['device_id']}&limit=50")["data"]
    assert all(r["connection"] == a["device_id"] for r in rows)
    keyed = [r for r in rows if r["idempotency_key"] == key]
    assert [r["attempt"] for r in keyed] == [1, 2, 3]
    assert keyed[0]["fault"]["action"] == "drop_after" and keyed[0]["status"] == 499
    assert [r["replay"] for r in keyed] == [False, True, True]
    assert [r["status"] for r in keyed[1:]] == [201, 201]
    assert [r["path"] for r in api.admin("GET", f"/requests?connection={b['device_id']}")["data"]] == ["/v2/connection"]


def test_recent_events_streams_and_polls(api, pos):
    api.admin("POST", "/catalog/11/sold_out", {"product_ids": ["prod_gulas"]})
    api.call("GET", "/v2/events?restaurant_id=11", pos)
    out = api.admin("GET", "/events/recent?limit=5")
    assert out["data"][0]["type"] == "catalog.updated" and out["data"][0]["restaurant_id"] == "11"
    assert "data" not in out["data"][0] and out["last_seq"] >= out["data"][0]["seq"]
    dev = api.admin("GET", "/connections")["data"]
    polled = [p["connection"] for p in out["polling"]]
    assert any(d["id"] in polled for d in dev)
    assert out["streams"] == []


def test_connections_tokens_refreshes_and_revoke(api):
    tok = api.token()
    dev_id = tok["device_id"]
    r = api.form("/oauth/token", {"grant_type": "refresh_token", "refresh_token": tok["refresh_token"],
                                  "client_id": "profirest-pos"}).json()
    row = next(c for c in api.admin("GET", "/connections")["data"] if c["id"] == dev_id)
    assert row["kind"] == "device" and row["refreshes"] == 1 and row["access_token_expires_at"]
    assert row["access_token_expired"] is False and row["restaurant_ids"] == ["11"]
    api.admin("POST", "/tokens/expire", {"device_id": dev_id})
    row = next(c for c in api.admin("GET", "/connections")["data"] if c["id"] == dev_id)
    assert row["access_token_expired"] is True
    assert api.admin("DELETE", f"/connections/{dev_id}") == {"revoked": dev_id, "kind": "device"}
    assert dev_id not in [c["id"] for c in api.admin("GET", "/connections")["data"]]
    assert api.call("GET", "/v2/connection", r["access_token"]).status_code == 401
    assert api.http.delete(api.base + f"/_sandbox/connections/{dev_id}").status_code == 404


def test_delete_one_fault(api):
    f1 = api.admin("POST", "/faults", {"path": "/v2/a", "action": "garbage"})
    f2 = api.admin("POST", "/faults", {"path": "/v2/b", "action": "garbage"})
    assert [f["id"] for f in api.admin("DELETE", f"/faults/{f1['id']}")["data"]] == [f2["id"]]
    assert api.http.delete(api.base + f"/_sandbox/faults/{f1['id']}").status_code == 404
