"""Fault injection from the admin API: statuses, dropped connections, delays, closing keep-alive connections,
redirects, truncated and garbage bodies."""
import socket
import time
import uuid
from urllib.parse import urlsplit

import pytest
import requests

PUNCH = "/v2/restaurants/11/attendance/punches"


def punch_body():
    return {"id": str(uuid.uuid4()), "type": "clock_in", "credential": {"method": "pin", "secret": "1234"}}


def test_status_with_retry_after_and_count(api, pos):
    f = api.admin("POST", "/faults", {"method": "GET", "path": "/v2/restaurants/*", "count": 2, "action": "status",
                                      "status": 503, "retry_after": "2"})
    for _ in range(2):
        r = api.call("GET", "/v2/restaurants/11", pos)
        assert r.status_code == 503 and r.headers["Retry-After"] == "2"
        assert r.json()["code"] == "service_unavailable" and r.json()["retry_after"] == 2
        assert r.headers["Profirest-Request-Id"]
    assert api.call("GET", "/v2/restaurants/11", pos).status_code == 200
    assert api.call("GET", "/v2/restaurants", pos).status_code == 200  # the glob needs a segment after /restaurants/
    listed = api.admin("GET", "/faults")["data"]
    assert listed[0]["id"] == f["id"] and listed[0]["remaining"] == 0


def test_429_with_http_date_and_non_problem_bodies(api, pos):
    date = "Wed, 21 Oct 2037 07:28:00 GMT"
    api.admin("POST", "/faults", {"path": "/v2/connection", "action": "status", "status": 429, "retry_after": date})
    r = api.call("GET", "/v2/connection", pos)
    assert r.status_code == 429 and r.headers["Retry-After"] == date and r.json()["code"] == "rate_limited"
    assert "retry_after" not in r.json()
    api.admin("POST", "/faults", {"path": "/v2/connection", "action": "status", "status": 502, "problem": False})
    r = api.call("GET", "/v2/connection", pos)
    assert r.status_code == 502 and r.headers["Content-Type"].startswith("text/html")
    api.admin("POST", "/faults", {"path": "/v2/connection", "action": "status", "status": 503, "problem": False})
    r = api.call("GET", "/v2/connection", pos)
    assert r.status_code == 503 and r.content == b""
    api.admin("DELETE", "/faults")
    assert api.call("GET", "/v2/connection", pos).status_code == 200


def test_drop_before_commits_nothing(api, pos):
    api.admin("POST", "/faults", {"method": "POST", "path": PUNCH, "action": "drop_before"})
    b = punch_body()
    with pytest.raises(requests.ConnectionError):
        api.call("POST", PUNCH, pos, json_body=b, session=requests.Session())
    assert api.call("GET", PUNCH, pos).json()["data"] == []
    assert api.call("POST", PUNCH, pos, json_body=b).status_code == 201


def test_drop_after_commits_and_a_retry_replays(api, pos):
    api.admin("POST", "/faults", {"method": "POST", "path": PUNCH, "action": "drop_after"})
    b = punch_body()
    h = {"Idempotency-Key": "drop-after-1"}
    with pytest.raises(requests.ConnectionError):
        api.call("POST", PUNCH, pos, json_body=b, headers=h, session=requests.Session())
    assert len(api.call("GET", PUNCH, pos).json()["data"]) == 1
    r = api.call("POST", PUNCH, pos, json_body=b, headers=h)
    assert r.status_code == 201 and r.headers["Idempotent-Replayed"] == "true"
    r = api.call("POST", PUNCH, pos, json_body=b)  # without the key: the punch id guards it
    assert r.status_code == 200
    assert api.admin("GET", "/stats")["punches_recorded"] == 1


def test_delay(api, pos):
    api.admin("POST", "/faults", {"path": "/v2/connection", "action": "delay", "delay_ms": 300})
    t = time.monotonic()
    assert api.call("GET", "/v2/connection", pos).status_code == 200
    assert time.monotonic() - t >= 0.3


def raw_get(base, path, token, sock=None):
    u = urlsplit(base)
    s = sock or socket.create_connection((u.hostname, u.port), timeout=5)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: {u.netloc}\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
    return s


def read_response(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0].split(b":")[1])
    while len(rest) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    return head, rest


def test_close_after_response_keeps_no_connection_close_header(api, pos):
    api.admin("POST", "/faults", {"path": "/v2/connection", "action": "close_after_response"})
    s = raw_get(api.base, "/v2/connection", pos)
    head, body = read_response(s)
    assert head.startswith(b"HTTP/1.1 200") and b"connection: close" not in head.lower() and b'"client_id"' in body
    time.sleep(0.05)
    s.settimeout(2)
    assert s.recv(10) == b""  # the server closed the keep-alive connection after answering
    s.close()
    # without the fault the connection stays open for the next request
    s = raw_get(api.base, "/v2/connection", pos)
    read_response(s)
    raw_get(api.base, "/v2/connection", pos, s)
    head, _ = read_response(s)
    assert head.startswith(b"HTTP/1.1 200")
    s.close()


def test_redirect_truncate_garbage(api, pos):
    api.admin("POST", "/faults", {"path": "/v2/connection", "action": "redirect", "location": "https://evil.example/x"})
    r = api.call("GET", "/v2/connection", pos, allow_redirects=False)
    assert r.status_code == 307 and r.headers["Location"] == "https://evil.example/x"
    api.admin("POST", "/faults", {"path": "/v2/connection", "action": "truncate"})
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        api.call("GET", "/v2/connection", pos, session=requests.Session())
    api.admin("POST", "/faults", {"path": "/v2/connection", "action": "garbage"})
    r = api.call("GET", "/v2/connection", pos)
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/json"
    with pytest.raises(ValueError):
        r.json()


def test_faults_never_touch_the_admin_api(api):
    api.admin("POST", "/faults", {"path": "*", "action": "status", "status": 500, "count": None})
    assert api.admin("GET", "/faults")["data"][0]["remaining"] is None
    api.admin("DELETE", "/faults")


def test_bad_fault_specs(api):
    r = api.http.post(api.base + "/_sandbox/faults", json={"action": "explode"})
    assert r.status_code == 400


@pytest.mark.parametrize("spec", [
    {"action": "random", "mix": ["garbage"]},
    {"action": "random", "rate": 0, "mix": ["garbage"]},
    {"action": "random", "rate": 1.5, "mix": ["garbage"]},
    {"action": "random", "rate": True, "mix": ["garbage"]},
    {"action": "random", "rate": 0.5, "mix": []},
    {"action": "random", "rate": 0.5, "mix": ["explode"]},
    {"action": "random", "rate": 0.5, "mix": ["delay"]},  # needs delay_ms: only as an object
    {"action": "random", "rate": 0.5, "mix": ["status:abc"]},
    {"action": "random", "rate": 0.5, "mix": ["status:503:soon"]},
    {"action": "random", "rate": 0.5, "mix": [{"action": "random", "rate": 1, "mix": ["garbage"]}]},
    {"action": "random", "rate": 0.5, "mix": [{"action": "status"}]},
    {"action": "random", "rate": 0.5, "mix": ["garbage"], "seed": "one"},
])
def test_bad_random_specs(api, spec):
    r = api.http.post(api.base + "/_sandbox/faults", json=spec)
    assert r.status_code == 400, spec


def test_random_429_carries_retry_after_one(api, pos):
    f = api.admin("POST", "/faults", {"path": "/v2/connection", "action": "random", "rate": 1, "mix": ["status:429"],
                                      "count": 3})
    for _ in range(3):
        r = api.call("GET", "/v2/connection", pos)
        assert r.status_code == 429 and r.headers["Retry-After"] == "1" and r.json()["code"] == "rate_limited"
    assert api.call("GET", "/v2/connection", pos).status_code == 200
    listed = api.admin("GET", "/faults")["data"][0]
    assert listed["id"] == f["id"] and listed["picked"] == {"status:429": 3} and listed["remaining"] == 0
    assert not any(k.startswith("_") for k in listed)


def test_random_503_comes_with_and_without_retry_after(api, pos):
    api.admin("POST", "/faults", {"path": "/v2/connection", "action": "random", "rate": 1, "mix": ["status:503"],
                                  "count": None, "seed": 1})
    answers = [api.call("GET", "/v2/connection", pos) for _ in range(20)]
    assert {r.status_code for r in answers} == {503}
    assert {r.headers.get("Retry-After") for r in answers} == {"1", None}


def test_random_rate_and_seed(api, pos):
    # a miss costs no count and the seed repeats the same sequence
    def run() -> list[int]:
        api.admin("DELETE", "/faults")
        api.admin("POST", "/faults", {"path": "/v2/connection", "action": "random", "rate": 0.3, "seed": 7,
                                      "mix": ["status:503:none", {"action": "status", "status": 500}], "count": None})
        return [api.call("GET", "/v2/connection", pos).status_code for _ in range(100)]

    first = run()
    hits = sum(1 for s in first if s != 200)
    assert 15 <= hits <= 45 and set(first) == {200, 500, 503}
    assert api.admin("GET", "/faults")["data"][0]["triggered"] == hits
    assert run() == first


SOAK_MIX = ["drop_before", "drop_after", "status:503", "status:429", "close_after_response", "truncate", "garbage"]


def create_until_answered(api, pos, body: dict, key: str) -> dict:
    """A client that retries with the same key until it reads a 201 with a JSON body."""
    for _ in range(50):
        try:
            r = api.call("POST", "/v2/customers", pos, json_body=body, headers={"Idempotency-Key": key},
                         session=requests.Session())
            if r.status_code == 201:
                return r.json()
        except (requests.RequestException, ValueError):
            pass
    raise AssertionError(f"{key} was never answered")


def test_random_faults_lose_and_double_nothing_under_keys(api):
    # seed 1 at rate 0.5 picks every action of the mix within these 30 writes
    tok = api.token()
    pos, conn = tok["access_token"], tok["device_id"]
    api.admin("POST", "/faults", {"method": "POST", "path": "/v2/customers", "action": "random", "rate": 0.5,
                                  "mix": SOAK_MIX, "count": None, "seed": 1})
    n = 30
    ids = {create_until_answered(api, pos, {"name": f"Soak {i}", "email": f"soak{i}@example.cz"}, f"soak-{i}")["id"]
           for i in range(n)}
    assert len(ids) == n
    ledger = api.admin("GET", "/commits?full=1")
    assert ledger["by_key"][conn] == {f"soak-{i}": 1 for i in range(n)} and ledger["duplicated_keys"] == 0
    assert set(api.admin("GET", "/faults")["data"][0]["picked"]) == set(SOAK_MIX)
    stats = api.admin("GET", "/stats")
    assert stats["idempotent_replays"] > 0 and stats["body_mismatch_under_key"] == 0  # drop_after, truncate
    api.admin("DELETE", "/faults")
    emails = [c["email"] for c in api.call("GET", "/v2/customers?limit=100", pos).json()["data"]]
    assert sorted(e for e in emails if e.startswith("soak")) == sorted(f"soak{i}@example.cz" for i in range(n))
