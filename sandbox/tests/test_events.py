"""The event feed: pages by cursor, SSE with ids, resume, heartbeats, stream down and cut, expired cursors, bulk events."""
import json
import queue
import threading
import time
import uuid

import pytest
import requests

PUNCH = "/v2/restaurants/11/attendance/punches"


def punch(api, pos, type_="clock_in", secret="1234"):
    r = api.call("POST", PUNCH, pos, json_body={"id": str(uuid.uuid4()), "type": type_,
                                                "credential": {"method": "pin", "secret": secret}})
    assert r.status_code == 201, r.text
    return r.json()


def test_pages_by_cursor(api, pos):
    first = api.call("GET", "/v2/events", pos).json()
    assert first["data"] == [] and first["has_more"] is False
    punch(api, pos)
    punch(api, pos, secret="3333")
    punch(api, pos, "clock_out")
    page = api.call("GET", "/v2/events", pos, params={"cursor": first["next_cursor"], "limit": 2}).json()
    assert [e["type"] for e in page["data"]] == ["attendance.punch_recorded"] * 2 and page["has_more"] is True
    rest = api.call("GET", "/v2/events", pos, params={"cursor": page["next_cursor"]}).json()
    assert len(rest["data"]) == 1 and rest["has_more"] is False and rest["data"][0]["data"]["state"] == "off"
    empty = api.call("GET", "/v2/events", pos, params={"cursor": rest["next_cursor"]}).json()
    assert empty["data"] == [] and empty["next_cursor"] == rest["next_cursor"]


def test_filters_and_restaurant_reach(api, pos):
    start = api.call("GET", "/v2/events", pos).json()["next_cursor"]
    punch(api, pos)
    r = api.call("GET", "/v2/events", pos, params={"cursor": start, "types": "order.created,tab.updated"}).json()
    assert r["data"] == []
    assert api.call("GET", "/v2/events", pos, params={"restaurant_id": "12"}).json()["code"] == "restaurant_forbidden"
    assert api.call("GET", "/v2/events", pos, params={"types": "nonsense"}).status_code == 422


def test_expired_and_invalid_cursors(api, pos):
    c = api.call("GET", "/v2/events", pos).json()["next_cursor"]
    api.admin("POST", "/cursors/expire", {})
    r = api.call("GET", "/v2/events", pos, params={"cursor": c})
    assert r.status_code == 410 and r.json()["code"] == "cursor_expired"
    restart = r.json()["next_cursor"]  # the end of the feed: read on from it after reloading, nothing is missed
    punch(api, pos)
    after = api.call("GET", "/v2/events", pos, params={"cursor": restart}).json()
    assert after["data"], "an event after the 410 is read from its next_cursor"
    r = api.call("GET", "/v2/events/stream", pos, headers={"Last-Event-ID": c})
    assert r.status_code == 410 and r.json()["next_cursor"] == after["next_cursor"]
    assert api.call("GET", "/v2/events", pos, params={"cursor": "ev_nope"}).json()["code"] == "cursor_invalid"
    fresh = api.call("GET", "/v2/events", pos).json()["next_cursor"]
    assert api.call("GET", "/v2/events", pos, params={"cursor": fresh}).status_code == 200
    api.admin("POST", "/config", {"event_retention": 1})
    time.sleep(1.1)  # the seed's events are older than the retention now
    assert api.call("GET", "/v2/events", pos, params={"cursor": fresh}).json()["code"] == "cursor_expired"


class Stream:
    """Reads an SSE response on a thread; frames land in a queue."""

    def __init__(self, api, token, headers=None, params=None):
        self.q = queue.Queue()
        self.resp = requests.get(api.base + "/v2/events/stream", headers={"Authorization": "Bearer " + token,
                                                                          **(headers or {})},
                                 params=params, stream=True, timeout=10)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        frame = []
        try:
            for line in self.resp.iter_lines(chunk_size=1, decode_unicode=True):
                if line == "":
                    if frame:
                        self.q.put(frame)
                    frame = []
                else:
                    frame.append(line)
        except Exception:  # noqa: BLE001
            pass
        self.q.put(None)

    def close(self, api):
        api.admin("POST", "/stream/cut", {})  # the server ends it; closing under a reading thread would block
        self.thread.join(5)
        self.resp.close()

    def next(self, timeout=5):
        return self.q.get(timeout=timeout)

    def next_event(self, timeout=5):
        while True:
            f = self.next(timeout)
            if f is None or any(l.startswith("event:") for l in f):
                return f


def test_sse_ids_resume_and_heartbeat(api, pos):
    api.admin("POST", "/config", {"heartbeat": 0.3})
    s = Stream(api, pos)
    assert s.resp.status_code == 200 and s.resp.headers["Content-Type"].startswith("text/event-stream")
    assert s.resp.headers["Profirest-Request-Id"].startswith("req_")
    assert s.resp.headers["Profirest-Heartbeat"] == "0.3", "the stream announces its heartbeat"
    assert s.next() == ["retry: 2000", ": open"], "the first bytes come at once"
    punch(api, pos)
    f = s.next_event()
    fields = dict(l.split(": ", 1) for l in f)
    assert fields["event"] == "attendance.punch_recorded" and fields["id"].startswith("ev_c_")
    assert s.next(2) == [": keep-alive"]
    punch(api, pos, secret="3333")
    second = dict(l.split(": ", 1) for l in s.next_event())
    s.close(api)
    # resume after the first event: the second comes again
    s2 = Stream(api, pos, headers={"Last-Event-ID": fields["id"]})
    again = dict(l.split(": ", 1) for l in s2.next_event())
    assert again["id"] == second["id"] and again["data"] == second["data"]
    page = api.call("GET", "/v2/events", pos, params={"cursor": fields["id"]}).json()
    assert page["next_cursor"] == second["id"]
    s2.close(api)


def test_stream_down_and_cut(api, pos):
    s = Stream(api, pos)
    assert s.next() == ["retry: 2000", ": open"]
    assert api.admin("POST", "/stream/cut", {})["cut"] == 1
    assert s.next() is None  # the stream ended
    api.admin("POST", "/stream", {"down": True, "retry_after": 120})
    r = api.call("GET", "/v2/events/stream", pos)
    assert r.status_code == 503 and r.json()["code"] == "stream_unavailable" and r.headers["Retry-After"] == "120"
    assert api.call("GET", "/v2/events", pos).status_code == 200  # polling still works
    api.admin("POST", "/stream", {"down": False})
    s = Stream(api, pos)
    assert s.resp.status_code == 200
    s.close(api)


def test_a_stalled_stream_goes_silent_without_closing(api, pos):
    api.admin("POST", "/config", {"heartbeat": 0.2})
    s = Stream(api, pos)
    assert s.next() == ["retry: 2000", ": open"]
    assert s.next(2) == [": keep-alive"]
    assert api.admin("POST", "/stream/stall", {})["stalled"] == 1
    punch(api, pos)
    with pytest.raises(queue.Empty):
        s.next(1.0)  # five heartbeats and an event: nothing comes, and the stream does not end either
    assert api.admin("GET", "/stream")["open"] == 1
    fresh = Stream(api, pos)  # a new connection is not stalled: it delivers, and keeps its heartbeat
    assert fresh.next() == ["retry: 2000", ": open"]
    assert fresh.next(2) == [": keep-alive"]
    assert api.admin("POST", "/stream/cut", {})["cut"] == 2
    assert s.next() is None, "a cut still ends a stalled stream"
    fresh.thread.join(5)
    s.resp.close()
    fresh.resp.close()


def test_catalog_changes_and_unpairing_are_events(api, pos):
    start = api.call("GET", "/v2/events", pos).json()["next_cursor"]
    api.admin("POST", "/catalog/11/sold_out", {"product_ids": ["prod_gulas"]})
    products = {p["id"]: p for p in api.call("GET", "/v2/restaurants/11/catalog", pos).json()["products"]}
    assert products["prod_gulas"]["available"] is False and products["prod_smazak"]["available"] is True
    kds = api.token("profirest-kds")
    s = Stream(api, kds["access_token"])
    assert s.next() == ["retry: 2000", ": open"]
    api.admin("DELETE", f"/devices/{kds['device_id']}")
    assert s.next_event() is None or s.next() is None  # the unpaired device's stream ends
    types = [e["type"] for e in api.call("GET", "/v2/events", pos, params={"cursor": start}).json()["data"]]
    assert types == ["catalog.updated", "device.unpaired"]


def test_synthetic_events_in_bulk(api, pos):
    start = api.call("GET", "/v2/events", pos).json()["next_cursor"]
    s = Stream(api, pos, headers={"Last-Event-ID": start})
    assert s.next() == ["retry: 2000", ": open"]
    out = api.admin("POST", "/events", {"count": 150, "type": "catalog.updated", "restaurant_id": "11"})
    assert len(out["ids"]) == len(set(out["ids"])) == 150 and out["restaurant_id"] == "11"
    # the open stream is woken and gets every one, in order, each with the cursor after it
    streamed = [dict(l.split(": ", 1) for l in s.next_event()) for _ in range(150)]
    assert [json.loads(f["data"])["id"] for f in streamed] == out["ids"]
    assert streamed[-1]["id"] == out["next_cursor"]
    s.close(api)
    # polling reads the same events, with data a client may act on: the products sold out now
    polled, cursor = [], start
    while True:
        page = api.call("GET", "/v2/events", pos, params={"cursor": cursor, "limit": 100}).json()
        polled += page["data"]
        cursor = page["next_cursor"]
        if not page["has_more"]:
            break
    assert [e["id"] for e in polled] == out["ids"] and cursor == out["next_cursor"]
    products = api.call("GET", "/v2/restaurants/11/catalog", pos).json()["products"]
    sold_out = sorted(p["id"] for p in products if not p["available"])
    assert all(e["type"] == "catalog.updated" and e["restaurant_id"] == "11" and sorted(e["data"]["sold_out"]) == sold_out
               for e in polled)


def test_synthetic_events_refuse_what_they_cannot_make(api):
    def status(body):
        return api.http.post(api.base + "/_sandbox/events", json=body).status_code

    assert status({"count": 1, "type": "order.created"}) == 400  # its data would name an order that does not exist
    assert status({"count": 0}) == 400 and status({"count": 10_001}) == 400 and status({"count": "5"}) == 400
    assert status({"count": 1, "restaurant_id": "999"}) == 404
