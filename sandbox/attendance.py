"""Attendance: punches recorded exactly once by id, batches with per-item results, the presence state machine."""
from __future__ import annotations

from aiohttp import web

from .auth import employee_ref
from .db import iso
from .errors import ApiError, json_response, problem_body
from .operation import Ctx, operation
from .paging import page
from .restaurants import resolve_employee
from .state import Sandbox

# (state before) -> allowed punch -> state after
TRANSITIONS = {
    "off": {"clock_in": "working"},
    "working": {"break_start": "on_break", "clock_out": "off"},
    "on_break": {"break_end": "working", "clock_out": "off"},
}


def presence_of(sb: Sandbox, employee_id: str) -> dict:
    return sb.store.get("presence", employee_id) or {"state": "off", "since": None}


def record_punch(sb: Sandbox, ctx: Ctx, item: dict) -> tuple[int, dict]:
    """(201 or 200, AttendancePunch). Raises ApiError for the item's failure."""
    # punches are de-duplicated by id, so a doubled request never shows as a second punch: count the requests
    sb.stats.punch_requests[item["id"]] += 1
    existing = sb.store.get("punch", item["id"])
    if existing:
        return 200, existing
    if item.get("credential"):
        emp = resolve_employee(sb, ctx.conn.id, ctx.rid, item["credential"])
    elif ctx.staff:
        emp = sb.employee(ctx.staff["employee_id"])
    else:
        raise ApiError("validation_failed", "credential is required without Profirest-Staff-Token.",
                       errors=[{"pointer": "/credential", "code": "required", "message": "credential is required"}])
    pres = presence_of(sb, emp["id"])
    nxt = TRANSITIONS.get(pres["state"], {}).get(item["type"])
    if nxt is None:
        raise ApiError("attendance_state_conflict",
                       f"{emp['name']} is {pres['state']}; {item['type']} is not possible now.")
    occurred = item.get("occurred_at") or iso()
    punch = {"id": item["id"], "type": item["type"], "employee": employee_ref(emp), "state": nxt,
             "occurred_at": occurred, "recorded_at": iso(), "restaurant_id": ctx.rid}
    if not sb.store.insert_new("punch", item["id"], punch, ctx.rid):
        return 200, sb.store.get("punch", item["id"])
    sb.store.put("presence", emp["id"], {"employee_id": emp["id"], "state": nxt, "since": occurred}, ctx.rid)
    sb.stats.punches_recorded += 1
    sb.emit("attendance.punch_recorded", ctx.rid, {"punch_id": punch["id"], "employee_id": emp["id"], "state": nxt,
                                                   "type": item["type"]})
    return 201, punch


@operation("createAttendancePunch", body="AttendancePunchCreate", staff="optional", idempotent=True)
async def create_punch(ctx: Ctx) -> web.Response:
    status, punch = record_punch(ctx.sb, ctx, ctx.body)
    return json_response(punch, status)


@operation("createAttendancePunchBatch", body="AttendancePunchBatch", idempotent=True)
async def create_batch(ctx: Ctx) -> web.Response:
    results = []
    for item in ctx.body["punches"]:
        try:
            status, punch = record_punch(ctx.sb, ctx, item)
            results.append({"id": item["id"], "status": status, "punch": punch})
        except ApiError as e:
            status, body = problem_body(ctx.request, e.code, e.detail, e.status, **e.extra)
            ra = e.headers.get("Retry-After")
            if ra and ra.isdigit():
                body["retry_after"] = int(ra)
            results.append({"id": item["id"], "status": status, "problem": body})
    return json_response({"results": results})


@operation("listAttendancePunches")
async def list_punches(ctx: Ctx) -> web.Response:
    return page(ctx.request, ctx.sb.store.list("punch", ctx.rid, newest_first=True), "punches:" + ctx.rid)


def presence_list(sb: Sandbox, rid: str) -> list[dict]:
    out = []
    for p in sb.store.list("presence", rid):
        if p["state"] in ("working", "on_break"):
            emp = sb.employee(p["employee_id"])
            out.append({"employee": employee_ref(emp), "state": p["state"], "since": p["since"]})
    return out


@operation("listAttendancePresence")
async def list_presence(ctx: Ctx) -> web.Response:
    return page(ctx.request, presence_list(ctx.sb, ctx.rid), "presence:" + ctx.rid)
