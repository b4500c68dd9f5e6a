"""A partner at scale: strict refresh-token rotation (no replay grace), partner consents created in bulk, access
tokens that expire every few seconds."""
from __future__ import annotations

import json
import re
import time

import requests

from .conftest import start_sandbox, stop


def refresh(api, refresh_token: str, client_id: str = "moje-aplikace") -> requests.Response:
    return api.form("/oauth/token", {"grant_type": "refresh_token", "refresh_token": refresh_token,
                                     "client_id": client_id})


def test_strict_rotation_switched_by_the_admin_api(api):
    api.admin("POST", "/config", {"refresh_grace": 0})
    assert api.admin("GET", "/config")["refresh_grace"] == 0
    tok = api.token("profirest-kds")
    first = refresh(api, tok["refresh_token"], "profirest-kds")
    assert first.status_code == 200
    # At once, before the new refresh token was used: a lenient server would answer the same tokens again.
    again = refresh(api, tok["refresh_token"], "profirest-kds")
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    stats = api.admin("GET", "/stats")
    assert stats["refresh_reuse"] == 1 and stats["refresh_replays"] == 0
    # The new token still works; the connection is not revoked by the replay.
    assert refresh(api, first.json()["refresh_token"], "profirest-kds").status_code == 200
    # Back to the grace: a lost answer is replayed.
    api.admin("POST", "/config", {"refresh_grace": 60})
    tok = api.token("profirest-kds")
    new = refresh(api, tok["refresh_token"], "profirest-kds").json()
    assert refresh(api, tok["refresh_token"], "profirest-kds").json()["refresh_token"] == new["refresh_token"]


def test_strict_rotation_from_the_command_line():
    proc, ready = start_sandbox("--strict-rotation")
    try:
        base = ready["api"]
        assert requests.get(base + "/_sandbox/config").json()["refresh_grace"] == 0
        tok = requests.post(base + "/_sandbox/tokens", json={"client_id": "profirest-pos"}).json()
        form = {"grant_type": "refresh_token", "refresh_token": tok["refresh_token"], "client_id": "profirest-pos"}
        assert requests.post(base + "/oauth/token", data=form).status_code == 200
        assert requests.post(base + "/oauth/token", data=form).json()["error"] == "invalid_grant"
    finally:
        stop(proc)
    proc, ready = start_sandbox("--refresh-grace", "5", "--access-token-ttl", "3")
    try:
        config = requests.get(ready["api"] + "/_sandbox/config").json()
        assert config["refresh_grace"] == 5 and config["access_token_ttl"] == 3
    finally:
        stop(proc)


def test_a_thousand_partner_consents_at_once(api):
    started = time.monotonic()
    out = api.admin("POST", "/consents/bulk", {"count": 1000, "client_id": "moje-aplikace",
                                               "scope": "restaurants:read events:read"})
    elapsed = time.monotonic() - started
    assert elapsed < 10, f"{elapsed:.1f} s for 1,000 consents"  # about 0.3 s here; generous for busy machines
    rows = out["data"]
    assert out["count"] == 1000 and len(rows) == 1000 and out["scopes"] == ["restaurants:read", "events:read"]
    assert len({r["restaurant_id"] for r in rows}) == 1000, "a restaurant of its own each"
    assert len({r["connection_id"] for r in rows}) == 1000
    assert len({r["access_token"] for r in rows} | {r["refresh_token"] for r in rows}) == 2000
    assert {"11", "12"}.isdisjoint(r["restaurant_id"] for r in rows)
    for r in rows[:3] + rows[-3:]:
        assert r["restaurant_ids"] == [r["restaurant_id"]] and r["token_type"] == "Bearer" and r["expires_in"] > 0
        conn = api.call("GET", "/v2/connection", r["access_token"]).json()
        assert conn["kind"] == "partner" and conn["client_id"] == "moje-aplikace"
        assert [x["id"] for x in conn["restaurants"]] == [r["restaurant_id"]]
        assert api.call("GET", f"/v2/restaurants/{r['restaurant_id']}", r["access_token"]).status_code == 200
        assert api.call("GET", "/v2/restaurants/11", r["access_token"]).status_code in (403, 404)
        events = api.call("GET", "/v2/events", r["access_token"], params={"restaurant_id": r["restaurant_id"]})
        assert events.status_code == 200, events.text
    # A refresh of one of them rotates as any partner's does.
    new = refresh(api, rows[0]["refresh_token"])
    assert new.status_code == 200 and new.json()["refresh_token"] != rows[0]["refresh_token"]
    listed = api.admin("GET", "/connections")["data"]
    assert len([c for c in listed if c["kind"] == "partner"]) == 1000
    # A reset forgets them, restaurants included.
    api.admin("POST", "/reset", {})
    assert api.call("GET", "/v2/connection", rows[1]["access_token"]).status_code == 401
    assert len(api.admin("GET", "/restaurants")["data"]) == 2


def test_bulk_consents_for_existing_restaurants_and_bad_requests(api):
    out = api.admin("POST", "/consents/bulk", {"count": 3, "restaurant_ids": ["11", "12"], "scopes": None})
    assert [r["restaurant_ids"] for r in out["data"]] == [["11", "12"]] * 3
    assert out["client_id"] == "moje-aplikace" and "restaurants:read" in out["scopes"]
    conn = api.call("GET", "/v2/connection", out["data"][2]["access_token"]).json()
    assert sorted(x["id"] for x in conn["restaurants"]) == ["11", "12"]
    second = api.admin("POST", "/consents/bulk", {"count": 2, "client_id": "sandbox-eshop"})["data"]
    assert len({r["restaurant_id"] for r in second}) == 2 and "13" in {r["restaurant_id"] for r in second}
    for body, status in [({"count": 0}, 400), ({"count": 10_001}, 400), ({"count": True}, 400), ({"count": "5"}, 400),
                         ({"client_id": "profirest-pos"}, 400), ({"client_id": "nobody"}, 400),
                         ({"scope": "admin:everything"}, 400), ({"restaurant_ids": ["99"]}, 404),
                         ({"restaurant_ids": []}, 404)]:
        r = api.http.post(api.base + "/_sandbox/consents/bulk", json=body)
        assert r.status_code == status, (body, r.status_code, r.text)
        assert "error" in r.json()


def test_tokens_that_expire_every_second(api):
    api.admin("POST", "/config", {"access_token_ttl": 1})
    rows = api.admin("POST", "/consents/bulk", {"count": 5})["data"]
    assert {r["expires_in"] for r in rows} == {1}
    time.sleep(1.2)  # past the lifetime: a lower bound, so a busy machine cannot make it fail
    r = api.call("GET", "/v2/connection", rows[0]["access_token"])
    assert r.status_code == 401 and r.json()["code"] == "invalid_token"
    new = refresh(api, rows[0]["refresh_token"]).json()
    assert new["expires_in"] == 1
    assert api.call("GET", "/v2/connection", new["access_token"]).status_code == 200


def test_bulk_consents_on_a_state_file_are_fast_too(tmp_path):
    proc, ready = start_sandbox(db=str(tmp_path / "state.sqlite3"), validate=False)
    try:
        started = time.monotonic()
        r = requests.post(ready["api"] + "/_sandbox/consents/bulk", json={"count": 1000}, timeout=60)
        elapsed = time.monotonic() - started
        assert r.status_code == 201 and len(r.json()["data"]) == 1000
        assert elapsed < 10, f"{elapsed:.1f} s for 1,000 consents in a state file"  # one commit for all
    finally:
        stop(proc)


def test_the_event_generator_feeds_each_restaurant_at_its_rate(api):
    from .test_events import Stream
    rows = api.admin("POST", "/consents/bulk", {"count": 4, "scope": "restaurants:read events:read"})["data"]
    mine, other = rows[0], rows[1]
    quiet = Stream(api, mine["access_token"])  # opened before: its restaurant's events wake it, the others' do not
    assert quiet.next() == ["retry: 2000", ": open"]
    before = {r["connection_id"]: api.call("GET", "/v2/events", r["access_token"]).json()["next_cursor"] for r in rows}
    started = api.admin("POST", "/events/generator", {"rate": 5, "client_id": "moje-aplikace"})
    assert started["running"] and started["restaurants"] == 4 and started["rate"] == 5
    frames = [dict(l.split(": ", 1) for l in quiet.next_event(timeout=10)) for _ in range(5)]
    time.sleep(1.0)  # a lower bound: at least a second of generating
    status = api.admin("GET", "/events/generator")
    stopped = api.admin("DELETE", "/events/generator")
    quiet.close(api)
    assert status["running"] and status["emitted"] >= 20, status  # 4 restaurants × 5/s × ≥ 1 s
    assert not stopped["running"] and api.admin("GET", "/events/generator")["running"] is False
    for f in frames:
        event = json.loads(f["data"])
        assert f["event"] == "catalog.updated" and event["restaurant_id"] == mine["restaurant_id"], f
        # Written to the millisecond, so a client can measure its latency.
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", event["occurred_at"]), event
    # Every restaurant got its share, readable by its own connection only, in order; none is skipped.
    for row in (mine, other):
        first = api.call("GET", "/v2/events", row["access_token"],
                         params={"cursor": before[row["connection_id"]], "limit": 100}).json()
        assert len(first["data"]) >= 5, first
        assert {e["restaurant_id"] for e in first["data"]} == {row["restaurant_id"]}
        # An old cursor of a generated event still works (its occurred_at has milliseconds).
        page = api.call("GET", "/v2/events", row["access_token"], params={"cursor": first["next_cursor"]})
        assert page.status_code == 200, page.text
    emitted = api.admin("GET", "/events/recent?limit=1000")
    assert emitted["last_seq"] >= 20


def test_the_event_generator_refuses_bad_requests_and_stops_on_reset(api):
    for body, status in [({"rate": -1, "restaurant_ids": ["11"]}, 400), ({"rate": 101, "restaurant_ids": ["11"]}, 400),
                         ({"rate": True, "restaurant_ids": ["11"]}, 400), ({"rate": 1}, 400),
                         ({"rate": 1, "restaurant_ids": ["99"]}, 404), ({"rate": 1, "restaurant_ids": []}, 400),
                         ({"rate": 1, "restaurant_ids": ["11"], "type": "order.created"}, 400)]:
        r = api.http.post(api.base + "/_sandbox/events/generator", json=body)
        assert r.status_code == status, (body, r.status_code, r.text)
        assert "error" in r.json()
    assert api.admin("POST", "/events/generator", {"rate": 2, "restaurant_ids": ["11", "12"]})["running"]
    assert api.admin("POST", "/events/generator", {"rate": 0})["running"] is False
    assert api.admin("POST", "/events/generator", {"rate": 2, "restaurant_ids": ["11"]})["restaurants"] == 1
    api.admin("POST", "/reset", {})
    assert api.admin("GET", "/events/generator")["running"] is False


def test_one_restaurants_feed_can_be_failed_and_cut_alone(api):
    from .test_events import Stream
    rows = api.admin("POST", "/consents/bulk", {"count": 2, "scope": "restaurants:read events:read"})["data"]
    hit, spared = rows
    api.admin("POST", "/faults", {"path": "/v2/events*", "restaurant_id": hit["restaurant_id"], "count": None,
                                  "action": "status", "status": 503})
    for row, status in [(hit, 503), (spared, 200)]:
        r = api.call("GET", "/v2/events", row["access_token"], params={"restaurant_id": row["restaurant_id"]})
        assert r.status_code == status, r.text
    assert api.call("GET", "/v2/events", hit["access_token"]).status_code == 200, "without the restaurant in the query"
    r = api.http.post(api.base + "/_sandbox/faults", json={"path": "*", "restaurant_id": 13, "action": "garbage"})
    assert r.status_code == 400
    api.admin("DELETE", "/faults")
    streams = {row["connection_id"]: Stream(api, row["access_token"]) for row in rows}
    for s in streams.values():
        assert s.next() == ["retry: 2000", ": open"]
    assert api.admin("POST", "/stream/cut", {"connection": hit["connection_id"]})["cut"] == 1
    assert streams[hit["connection_id"]].next() is None, "its stream ended"
    api.admin("POST", "/events", {"restaurant_id": spared["restaurant_id"]})
    assert streams[spared["connection_id"]].next_event() is not None, "the other stream goes on"
    streams[spared["connection_id"]].close(api)


def test_refresh_early_counts_a_second_refresh_within_one_lifetime(api):
    api.admin("POST", "/config", {"access_token_ttl": 2, "refresh_grace": 0})
    api.admin("DELETE", "/stats")
    row = api.admin("POST", "/consents/bulk", {"count": 1})["data"][0]
    # At once: the access token has (almost) all of its two seconds left — a refresh nobody needed yet.
    first = refresh(api, row["refresh_token"]).json()
    assert api.admin("GET", "/stats")["refresh_early"] == 1
    time.sleep(1.2)  # past half the lifetime (a lower bound: a busy machine only makes it later)
    second = refresh(api, first["refresh_token"]).json()
    assert second["expires_in"] == 2
    stats = api.admin("GET", "/stats")
    assert stats["refresh_early"] == 1 and stats["token_refreshes"] == {"moje-aplikace": 2}
