"""Restaurants, paired devices, employees and staff sessions (PIN or card, shared PINs, lockout, idle/max expiry)."""
from __future__ import annotations

import secrets

from aiohttp import web

from . import connection
from .auth import STAFF_SCOPES, authenticate, employee_ref, staff_from_token
from .db import iso, now
from .errors import ApiError, json_response
from .operation import Ctx, operation
from .paging import page
from .state import SANDBOX, Sandbox, token_hash


def add_restaurants(sb: Sandbox, count: int) -> list[str]:
    """`count` new restaurants, numbered after the highest numeric id ("Restaurace 13", …; restaurant 12's short menu
    is every restaurant's but 11's), for partner consents in bulk; their ids. A reset forgets them."""
    taken = [int(r["id"]) for r in sb.store.list("restaurant") if str(r["id"]).isdigit()]
    first = max(taken, default=12) + 1
    hours = [{"weekday": d, "intervals": [{"from": "10:00", "to": "22:00"}]} for d in range(1, 8)]
    for n in range(first, first + count):
        sb.store.put("restaurant", str(n), {"id": str(n), "name": f"Restaurace {n}", "city": "Brno",
                                            "address": f"Testovací {n}, 602 00 Brno", "timezone": "Europe/Prague",
                                            "currency": "CZK", "opening_hours": hours}, str(n))
    return [str(n) for n in range(first, first + count)]


def summary(r: dict) -> dict:
    return {"id": r["id"], "name": r["name"], "city": r["city"]}


def staff_member(e: dict, with_offline: bool) -> dict:
    out = {"id": e["id"], "name": e["name"], "role": e["role"], "active": e["active"],
           "card_registered": bool(e.get("card"))}
    if with_offline and e.get("offline_approval") and e["role"] == "manager":
        out["offline_approval"] = e["offline_approval"]
    return out


@operation("listRestaurants")
async def list_restaurants(ctx: Ctx) -> web.Response:
    rs = [summary(r) for r in (ctx.sb.restaurant(rid) for rid in ctx.conn.restaurant_ids) if r]
    return page(ctx.request, rs, "restaurants")


@operation("getRestaurant")
async def get_restaurant(ctx: Ctx) -> web.Response:
    return json_response(ctx.restaurant)


@operation("listDevices")
async def list_devices(ctx: Ctx) -> web.Response:
    devs = [connection.device_info(d) for d in ctx.sb.store.list("device", ctx.rid) if d.get("active")]
    return page(ctx.request, devs, "devices:" + ctx.rid)


@operation("unpairDevice")
async def unpair_device(ctx: Ctx) -> web.Response:
    dev = ctx.sb.store.get("device", ctx.request.match_info["device_id"])
    if not dev or not dev.get("active") or dev["restaurant_id"] != ctx.rid:
        raise ApiError("not_found", "No such paired device.")
    connection.unpair(ctx.sb, dev["id"])
    return web.Response(status=204)


@operation("listStaff")
async def list_staff(ctx: Ctx) -> web.Response:
    staff = [staff_member(e, True) for e in ctx.sb.store.list("employee", ctx.rid)]
    return page(ctx.request, staff, "staff:" + ctx.rid)


# -- credentials (shared with attendance punches) -------------------------------------------------------
def _attempts(sb: Sandbox, conn_id: str) -> dict:
    return sb.store.get("staff_attempts", conn_id) or {"failures": [], "locked_until": 0}


def check_lock(sb: Sandbox, conn_id: str) -> None:
    a = _attempts(sb, conn_id)
    left = a["locked_until"] - now()
    if left > 0:
        secs = str(max(1, int(left + 0.999)))
        raise ApiError("staff_locked", f"Too many wrong PINs; try again in {secs} s.", headers={"Retry-After": secs})


def _failure(sb: Sandbox, conn_id: str) -> None:
    a = _attempts(sb, conn_id)
    t = now()
    a["failures"] = [f for f in a["failures"] if f > t - sb.config["staff_attempt_window"]] + [t]
    if len(a["failures"]) >= sb.config["staff_max_attempts"]:
        a["locked_until"] = t + sb.config["staff_lockout"]
        a["failures"] = []
    sb.store.put("staff_attempts", conn_id, a)


def resolve_employee(sb: Sandbox, conn_id: str, restaurant_id: str, cred: dict) -> dict:
    """The one active employee matching a PIN/card (+ employee_id after staff_ambiguous)."""
    check_lock(sb, conn_id)
    field = "pin" if cred["method"] == "pin" else "card"
    secret = cred["secret"].strip()
    if field == "card":
        secret = secret.upper()
    matches = [e for e in sb.store.list("employee", restaurant_id)
               if e["active"] and e.get(field) and e[field] == secret]
    if not matches:
        _failure(sb, conn_id)
        raise ApiError("staff_credentials_invalid", "No active employee has this PIN or card.")
    chosen = cred.get("employee_id")
    if chosen:
        matches = [e for e in matches if e["id"] == chosen]
        if not matches:
            _failure(sb, conn_id)
            raise ApiError("staff_credentials_invalid", "employee_id does not match this PIN or card.")
    if len(matches) > 1:
        raise ApiError("staff_ambiguous", "Several employees share this PIN; send again with employee_id.",
                       candidates=[{"id": e["id"], "name": e["name"], "role": e["role"]} for e in matches])
    a = _attempts(sb, conn_id)
    if a["failures"]:
        a["failures"] = []
        sb.store.put("staff_attempts", conn_id, a)
    return matches[0]


def session_json(sb: Sandbox, sess: dict, token: str) -> dict:
    emp = sb.employee(sess["employee_id"])
    return {"token": token, "employee": employee_ref(emp), "restaurant_id": sess["restaurant_id"],
            "idle_timeout_seconds": max(1, int(sess["idle"])), "max_expires_at": iso(sess["max_expires"]),
            "scopes": STAFF_SCOPES.get(emp["role"], [])}


@operation("createStaffSession", body="StaffCredential", idempotent=True)
async def create_staff_session(ctx: Ctx) -> web.Response:
    sb = ctx.sb
    emp = resolve_employee(sb, ctx.conn.id, ctx.rid, ctx.body)
    token = "st_" + secrets.token_urlsafe(18)
    t = now()
    sess = {"employee_id": emp["id"], "restaurant_id": ctx.rid, "conn": ctx.conn.id, "created": t, "last_used": t,
            "idle": sb.config["staff_idle"], "max_expires": t + sb.config["staff_max"]}
    sb.store.put("staff_session", token_hash(token), sess, ctx.rid)
    return json_response(session_json(sb, sess, token), 201)


async def current_session(request: web.Request) -> web.Response:
    sb = request.app[SANDBOX]
    conn = authenticate(sb, request)
    if "staff:authenticate" not in conn.scopes:
        raise ApiError("insufficient_scope", "The token lacks the scope staff:authenticate.")
    if "Profirest-Staff-Token" not in request.headers:
        raise ApiError("staff_session_missing", "Send Profirest-Staff-Token.")
    sess = staff_from_token(sb, request, conn, extend=False)
    if request.method == "DELETE":
        sess["ended"] = True
        th = sess.pop("_token_hash")
        sb.store.put("staff_session", th, sess, sess["restaurant_id"])
        return web.Response(status=204)
    sess.pop("_token_hash", None)
    return json_response(session_json(sb, sess, ""))


def routes(app: web.Application) -> None:
    # One handler for two operations (GET and DELETE), so not an @operation: registered here.
    app.router.add_get("/v2/staff/sessions/current", current_session)
    app.router.add_delete("/v2/staff/sessions/current", current_session)
