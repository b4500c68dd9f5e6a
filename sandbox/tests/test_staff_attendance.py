"""Staff sessions (PIN, card, shared PIN, lockout, idle and max expiry) and attendance punches."""
import time
import uuid

SESS = "/v2/restaurants/11/staff/sessions"
PUNCH = "/v2/restaurants/11/attendance/punches"


def sign_in(api, pos, secret, method="pin", **kw):
    return api.call("POST", SESS, pos, json_body={"method": method, "secret": secret, **kw})


def test_pin_card_and_current_session(api, pos):
    r = sign_in(api, pos, "1234")
    s = r.json()
    assert r.status_code == 201 and s["employee"]["name"] == "Jana Nováková" and s["idle_timeout_seconds"] == 300
    cur = api.call("GET", "/v2/staff/sessions/current", pos, headers={"Profirest-Staff-Token": s["token"]}).json()
    assert cur["token"] == "" and cur["employee"]["id"] == "emp_1"
    card = sign_in(api, pos, "04a1b2c3", "card").json()
    assert card["employee"]["id"] == "emp_1"
    assert api.call("DELETE", "/v2/staff/sessions/current", pos,
                    headers={"Profirest-Staff-Token": s["token"]}).status_code == 204
    r = api.call("GET", "/v2/staff/sessions/current", pos, headers={"Profirest-Staff-Token": s["token"]})
    assert r.status_code == 401 and r.json()["code"] == "staff_session_expired"
    r = api.call("GET", "/v2/staff/sessions/current", pos)
    assert r.status_code == 403 and r.json()["code"] == "staff_session_missing"


def test_shared_pin_is_ambiguous_then_chosen(api, pos):
    r = sign_in(api, pos, "2222")
    body = r.json()
    assert r.status_code == 409 and body["code"] == "staff_ambiguous"
    assert [c["name"] for c in body["candidates"]] == ["Petr Svoboda", "Eva Dvořáková"]
    r = sign_in(api, pos, "2222", employee_id="emp_3")
    assert r.status_code == 201 and r.json()["employee"]["role"] == "cook"


def test_wrong_pins_lock_the_device(api, pos):
    for _ in range(4):
        assert sign_in(api, pos, "0000").json()["code"] == "staff_credentials_invalid"
    assert sign_in(api, pos, "9999").json()["code"] == "staff_credentials_invalid"  # inactive employee
    r = sign_in(api, pos, "1234")
    assert r.status_code == 429 and r.json()["code"] == "staff_locked"
    assert int(r.headers["Retry-After"]) == 300 and r.json()["retry_after"] == 300
    other = api.token("profirest-dochazka")["access_token"]  # another device is not locked
    assert sign_in(api, other, "1234").status_code == 201


def test_idle_timeout_is_extended_by_requests_and_max_expiry(api, pos):
    api.admin("POST", "/config", {"staff_idle": 1, "staff_max": 2.5})
    tok = sign_in(api, pos, "1234").json()["token"]
    h = {"Profirest-Staff-Token": tok}
    for _ in range(3):
        time.sleep(0.6)
        assert api.call("POST", "/v2/restaurants/11/tabs", pos, json_body={"name": "Stůl 1"}, headers=h).status_code == 201
    time.sleep(0.8)  # past the max expiry although active
    r = api.call("POST", "/v2/restaurants/11/tabs", pos, json_body={"name": "Stůl 2"}, headers=h)
    assert r.json()["code"] == "staff_session_expired"
    tok = sign_in(api, pos, "1234").json()["token"]
    time.sleep(1.2)  # idle
    r = api.call("POST", "/v2/restaurants/11/tabs", pos, json_body={"name": "Stůl 3"},
                 headers={"Profirest-Staff-Token": tok})
    assert r.status_code == 401 and r.json()["code"] == "staff_session_expired"


def punch(api, pos, type_, secret="1234", id_=None, **kw):
    body = {"id": id_ or str(uuid.uuid4()), "type": type_, **kw}
    if secret:
        body["credential"] = {"method": "pin", "secret": secret}
    return api.call("POST", PUNCH, pos, json_body=body)


def test_punch_exactly_once_by_id(api, pos):
    pid = str(uuid.uuid4())
    first = punch(api, pos, "clock_in", id_=pid, occurred_at="2026-11-29T07:58:12Z")
    assert first.status_code == 201 and first.json()["state"] == "working"
    again = punch(api, pos, "clock_in", id_=pid, occurred_at="2026-11-29T07:58:12Z",
                  )
    assert again.status_code == 200 and again.json() == first.json()
    assert api.admin("GET", "/stats")["punches_recorded"] == 1
    listed = api.call("GET", PUNCH, pos).json()["data"]
    assert [p["id"] for p in listed] == [pid]


def test_presence_state_machine_and_conflicts(api, pos):
    assert punch(api, pos, "clock_out").json()["code"] == "attendance_state_conflict"
    assert punch(api, pos, "clock_in").json()["state"] == "working"
    assert punch(api, pos, "clock_in").status_code == 409
    assert punch(api, pos, "break_start").json()["state"] == "on_break"
    assert punch(api, pos, "break_start").json()["code"] == "attendance_state_conflict"
    pres = api.call("GET", "/v2/restaurants/11/attendance/presence", pos).json()["data"]
    assert [(p["employee"]["name"], p["state"]) for p in pres] == [("Jana Nováková", "on_break")]
    assert punch(api, pos, "break_end").json()["state"] == "working"
    assert punch(api, pos, "clock_out").json()["state"] == "off"
    assert api.call("GET", "/v2/restaurants/11/attendance/presence", pos).json()["data"] == []


def test_punch_with_shared_pin_and_staff_token(api, pos):
    pid = str(uuid.uuid4())
    r = punch(api, pos, "clock_in", "2222", pid)
    assert r.json()["code"] == "staff_ambiguous"
    r = api.call("POST", PUNCH, pos, json_body={"id": pid, "type": "clock_in",
                                                "credential": {"method": "pin", "secret": "2222", "employee_id": "emp_2"}})
    assert r.status_code == 201 and r.json()["employee"]["id"] == "emp_2"
    tok = sign_in(api, pos, "3333").json()["token"]
    r = api.call("POST", PUNCH, pos, json_body={"id": str(uuid.uuid4()), "type": "clock_in"},
                 headers={"Profirest-Staff-Token": tok})
    assert r.status_code == 201 and r.json()["employee"]["name"] == "Tomáš Král"
    r = api.call("POST", PUNCH, pos, json_body={"id": str(uuid.uuid4()), "type": "clock_in"})
    assert r.status_code == 422 and r.json()["errors"][0]["pointer"] == "/credential"


def test_batch_has_per_item_results(api, pos):
    a, b, c = (str(uuid.uuid4()) for _ in range(3))
    items = [{"id": a, "type": "clock_in", "credential": {"method": "pin", "secret": "3333"},
              "occurred_at": "2026-11-29T06:00:00Z"},
             {"id": b, "type": "clock_in", "credential": {"method": "pin", "secret": "3333"}},
             {"id": c, "type": "clock_in", "credential": {"method": "pin", "secret": "0000"}},
             {"id": a, "type": "clock_in", "credential": {"method": "pin", "secret": "3333"}}]
    r = api.call("POST", PUNCH + "/batch", pos, json_body={"punches": items})
    res = r.json()["results"]
    assert r.status_code == 200
    assert [x["status"] for x in res] == [201, 409, 401, 200]
    assert res[1]["problem"]["code"] == "attendance_state_conflict"
    assert res[2]["problem"]["code"] == "staff_credentials_invalid"
    assert res[3]["punch"] == res[0]["punch"]
    assert api.call("POST", PUNCH + "/batch", pos, json_body={"punches": []}).status_code == 422


def item(pid, type_, pin):
    return {"id": pid, "type": type_, "credential": {"method": "pin", "secret": pin}}


def test_batch_resent_from_an_offline_queue(api, pos):
    # the first batch got through but its answer was lost; the queue sends it again with more punches under a new key
    a, b, c, d, e = (str(uuid.uuid4()) for _ in range(5))
    first = api.call("POST", PUNCH + "/batch", pos, json_body={"punches": [item(a, "clock_in", "3333")]},
                     headers={"Idempotency-Key": "batch-1"}).json()["results"][0]
    assert first["status"] == 201
    items = [item(a, "clock_in", "0000"),  # recorded already: its id decides, not the (now wrong) PIN
             item(b, "clock_in", "1234"),
             item(c, "clock_in", "0000"),  # a permanent failure of its own
             item(d, "clock_in", "3333"),  # Tomáš is working already
             item(e, "break_start", "3333")]
    r = api.call("POST", PUNCH + "/batch", pos, json_body={"punches": items}, headers={"Idempotency-Key": "batch-2"})
    res = r.json()["results"]
    assert r.status_code == 200 and [x["id"] for x in res] == [a, b, c, d, e]
    assert [x["status"] for x in res] == [200, 201, 401, 409, 201]
    assert res[0]["punch"] == first["punch"] and "problem" not in res[0]
    assert res[2]["problem"]["code"] == "staff_credentials_invalid" and "punch" not in res[2]
    assert res[3]["problem"]["code"] == "attendance_state_conflict"
    assert res[4]["punch"]["state"] == "on_break"
    again = api.call("POST", PUNCH + "/batch", pos, json_body={"punches": items}, headers={"Idempotency-Key": "batch-2"})
    assert again.json() == r.json() and again.headers["Idempotent-Replayed"] == "true"
    recorded = {p["id"] for p in api.call("GET", PUNCH, pos).json()["data"]}
    assert recorded == {a, b, e}
    ledger = api.admin("GET", "/commits?full=1")
    assert ledger["punch_requests"][a] == 2 and ledger["punches"]["duplicated_ids"] == 1
    assert ledger["by_operation"] == {"createAttendancePunchBatch": 2}
