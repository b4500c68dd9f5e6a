"""The admin JSON API under /_sandbox/ (loopback only, no auth, not part of the contract) and the admin page."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

from aiohttp import web

from . import connection, contract, faults, oauth, pairing, reqlog, seed
from .attendance import presence_list
from .clients import CLIENTS, client_name
from .db import iso, now
from .errors import json_response
from .state import DEFAULT_CONFIG, Sandbox, new_id
from .stats import Stats

STATIC = Path(__file__).resolve().parent / "static"
LOOPBACK = {"127.0.0.1", "::1", "::ffff:127.0.0.1"}


def _err(status: int, message: str) -> web.Response:
    return json_response({"error": message}, status)


async def _json(request: web.Request) -> dict:
    if not request.body_exists:
        return {}
    try:
        data = json.loads((await request.read()) or b"{}")
    except ValueError:
        raise web.HTTPBadRequest(text='{"error": "invalid JSON"}', content_type="application/json")
    if not isinstance(data, dict):
        raise web.HTTPBadRequest(text='{"error": "send a JSON object"}', content_type="application/json")
    return data


@web.middleware
async def loopback_only(request: web.Request, handler):
    if request.path.startswith(("/_sandbox", "/admin")) and request.remote not in LOOPBACK:
        return _err(403, "the admin API answers on loopback only")
    return await handler(request)


def sb_of(request: web.Request) -> Sandbox:
    return request.app["sb"]


async def pairings(request):
    return json_response({"data": pairing.pending_pairings(sb_of(request))})


async def decide(request):
    sb = sb_of(request)
    body = await _json(request)
    approve = request.match_info["decision"] == "approve"
    try:
        out = pairing.decide_pairing(sb, request.match_info["user_code"], approve, str(body.get("restaurant_id") or "11"))
    except KeyError as e:
        return _err(404, e.args[0])
    except ValueError as e:
        return _err(409, str(e))
    return json_response(out)


def _device_row(d: dict) -> dict:
    return {**connection.device_info(d), "restaurant_id": d["restaurant_id"], "scopes": d.get("scopes", []),
            "active": d.get("active", False)}


async def devices(request):
    sb = sb_of(request)
    rows = [_device_row(d) for d in sb.store.list("device")]
    if request.query.get("all") != "1":
        rows = [r for r in rows if r["active"]]
    return json_response({"data": rows})


async def unpair(request):
    if not connection.unpair(sb_of(request), request.match_info["device_id"]):
        return _err(404, "no such paired device")
    return json_response({"unpaired": request.match_info["device_id"]})


async def expire_tokens(request):
    body = await _json(request)
    n = connection.expire_access_tokens(sb_of(request), body.get("device_id"), body.get("client_id"))
    return json_response({"expired": n})


async def mint_token(request):
    """A paired device (or a partner connection) at once, without the flow: for tests and scripts."""
    sb = sb_of(request)
    body = await _json(request)
    cid = body.get("client_id", "profirest-pos")
    client = CLIENTS.get(cid)
    if not client:
        return _err(404, f"unknown client {cid}")
    scopes = body.get("scopes") or contract.all_scopes()
    if client["kind"] == "device":
        rid = str(body.get("restaurant_id") or "11")
        if not sb.restaurant(rid):
            return _err(404, f"no restaurant {rid}")
        dev_id = new_id("dev_", 6)
        from .db import iso
        sb.store.put("device", dev_id, {"id": dev_id, "name": body.get("device_name") or f"Test {cid}",
                                        "platform": "linux", "app_version": "sandbox", "client_id": cid,
                                        "restaurant_id": rid, "scopes": scopes, "paired_at": iso(),
                                        "last_seen_at": None, "active": True}, rid)
        out = oauth.issue_tokens(sb, "device", dev_id, cid, scopes)
        out.update({"restaurant_id": rid, "device_id": dev_id})
        return json_response(out)
    rids = [str(r) for r in (body.get("restaurant_ids") or ["11"])]
    grant_id = new_id("grant_", 8)
    sb.store.put("grant", grant_id, {"id": grant_id, "client_id": cid, "restaurant_ids": rids, "scopes": scopes,
                                     "active": True})
    return json_response(oauth.issue_tokens(sb, "partner", grant_id, cid, scopes))


async def auto_consent(request):
    sb = sb_of(request)
    body = await _json(request)
    decision = body.get("decision")
    if decision not in ("approve", "deny", None):
        return _err(400, "decision is approve, deny or null")
    sb.auto_consent = None if decision is None else {"decision": decision,
                                                     "restaurant_ids": body.get("restaurant_ids") or ["11"]}
    return json_response({"auto_consent": sb.auto_consent})


async def add_fault(request):
    try:
        f = faults.add_fault(sb_of(request), await _json(request))
    except faults.FaultError as e:
        return _err(400, str(e))
    return json_response(f, 201)


async def list_faults(request):
    return json_response({"data": faults.listing(sb_of(request))})


async def delete_fault(request):
    sb = sb_of(request)
    before = len(sb.faults)
    sb.faults[:] = [f for f in sb.faults if f["id"] != request.match_info["fault_id"]]
    if len(sb.faults) == before:
        return _err(404, "no such fault")
    return json_response({"data": faults.listing(sb)})


async def clear_faults(request):
    sb_of(request).faults.clear()
    return json_response({"data": []})


async def stream(request):
    from . import events
    sb = sb_of(request)
    body = await _json(request)
    if "retry_after" in body:
        sb.stream_retry_after = int(body["retry_after"])
    if "down" in body:
        sb.stream_down = bool(body["down"])
        if sb.stream_down:
            await events.cut_streams(sb)
    return json_response({"down": sb.stream_down, "retry_after": sb.stream_retry_after, "open": len(sb.streams)})


async def stream_cut(request):
    from . import events
    return json_response({"cut": await events.cut_streams(sb_of(request))})


async def expire_cursors(request):
    sb = sb_of(request)
    sb.store.set_meta("cursor_epoch", sb.store.meta("cursor_epoch", 1) + 1)
    return json_response({"cursor_epoch": sb.store.meta("cursor_epoch")})


async def restart(request):
    sb = sb_of(request)
    body = await _json(request)
    down = float(body.get("down_ms", 200)) / 1000
    if sb.restart_hook is None:
        return _err(409, "not running under the sandbox runner")

    async def later():
        await asyncio.sleep(0.05)
        await sb.restart_hook(down)

    asyncio.get_running_loop().create_task(later())
    return json_response({"restarting": True, "down_ms": int(down * 1000)}, 202, {"Connection": "close"})


async def config(request):
    sb = sb_of(request)
    if request.method == "POST":
        body = await _json(request)
        unknown = [k for k in body if k not in DEFAULT_CONFIG]
        if unknown:
            return _err(400, f"unknown settings: {', '.join(unknown)}")
        for k, v in body.items():
            if not isinstance(v, (int, float)) or v < 0:
                return _err(400, f"{k} is a number ≥ 0")
            sb.config[k] = v
    return json_response(sb.config)


async def reset(request):
    sb = sb_of(request)
    seed.reset(sb)
    sb.faults.clear()
    sb.auto_consent = None
    sb.stream_down = False
    sb.stats = Stats()
    sb.request_log.clear()
    return json_response({"reset": True})


async def stats(request):
    sb = sb_of(request)
    if request.method == "DELETE":
        sb.stats = Stats()
    return json_response(sb.stats.as_json())


async def commits(request):
    """The commit ledger: counts, every key's and punch id's with ?full=1; DELETE zeroes only the ledger."""
    sb = sb_of(request)
    if request.method == "DELETE":
        sb.stats.clear_commits()
    if request.query.get("full") == "1":
        return json_response(sb.stats.commit_ledger())
    return json_response(sb.stats.commit_summary())


def _int_query(request: web.Request, name: str, default: int, top: int) -> int:
    try:
        return max(1, min(top, int(request.query.get(name, str(default)))))
    except ValueError:
        return default


async def requests_log(request):
    """The last public requests (oldest first), of every connection or ?connection=<device or grant id>."""
    sb = sb_of(request)
    limit = _int_query(request, "limit", 50, reqlog.PER_CONNECTION * 10)
    return json_response({"data": sb.request_log.rows(limit, request.query.get("connection") or None)})


def _streams(sb: Sandbox) -> list[dict]:
    return [{"connection": getattr(r, "_sandbox_conn", None), "opened_at": getattr(r, "_sandbox_opened_at", None)}
            for r in list(sb.streams)]


def _polling(sb: Sandbox) -> list[dict]:
    return [{"connection": c, **p} for c, p in sb.request_log.polls.items()]


async def recent_events(request):
    """The newest events of the feed first (without data), and who reads it: open streams and GET /v2/events pollers."""
    sb = sb_of(request)
    limit = _int_query(request, "limit", 100, 1000)
    return json_response({"data": sb.store.recent_events(limit), "last_seq": sb.store.last_event_seq(),
                          "streams": _streams(sb), "polling": _polling(sb)})


async def connections(request):
    """Every device and partner grant (?all=1 also the unpaired and revoked): its access token's expiry,
    refreshes, streams, polls and last request."""
    sb = sb_of(request)
    access: dict[str, dict] = {}
    for row in sb.store.conn.execute("SELECT data FROM objects WHERE kind='token'").fetchall():
        tok = json.loads(row[0])
        if tok["type"] != "access" or tok.get("revoked"):
            continue
        best = access.get(tok["conn"])
        if best is None or tok["issued_at"] > best["issued_at"]:
            access[tok["conn"]] = tok
    streams = _streams(sb)
    rows = []
    for d in sb.store.list("device"):
        rows.append({"id": d["id"], "kind": "device", "client_id": d["client_id"], "name": d["name"],
                     "restaurant_ids": [d["restaurant_id"]], "active": bool(d.get("active")),
                     "paired_at": d.get("paired_at"), "last_seen_at": d.get("last_seen_at")})
    for g in sb.store.list("grant"):
        rows.append({"id": g["id"], "kind": "partner", "client_id": g["client_id"], "name": client_name(g["client_id"]),
                     "restaurant_ids": list(g["restaurant_ids"]), "active": bool(g.get("active")),
                     "paired_at": None, "last_seen_at": None})
    if request.query.get("all") != "1":
        rows = [r for r in rows if r["active"]]
    t = now()
    for r in rows:
        tok = access.get(r["id"])
        r["access_token_expires_at"] = iso(tok["expires_at"]) if tok else None
        r["access_token_expired"] = bool(tok and tok["expires_at"] <= t)
        r["refreshes"] = sb.stats.conn_refreshes.get(r["id"], 0)
        r["streams"] = sum(1 for s in streams if s["connection"] == r["id"])
        poll = sb.request_log.polls.get(r["id"])
        r["last_poll_at"] = poll["last_poll_at"] if poll else None
        r["requests"] = sb.request_log.count(r["id"])
        last = sb.request_log.last_request(r["id"])
        r["last_request_at"] = last["time"] if last else None
    return json_response({"data": rows})


async def revoke_connection(request):
    """A device is unpaired, a partner grant revoked: its tokens fail at once, its streams end."""
    sb = sb_of(request)
    cid = request.match_info["conn_id"]
    if sb.store.get("device", cid):
        if not connection.unpair(sb, cid):
            return _err(404, "no such paired device")
        return json_response({"revoked": cid, "kind": "device"})
    grant = sb.store.get("grant", cid)
    if not grant or not grant.get("active"):
        return _err(404, "no such active connection")
    grant["active"] = False
    sb.store.put("grant", cid, grant)
    await events_cut(sb, cid)
    return json_response({"revoked": cid, "kind": "partner"})


async def events_cut(sb: Sandbox, conn_id: str) -> None:
    from . import events
    await events.cut_streams(sb, conn_id)


async def restaurants(request):
    sb = sb_of(request)
    return json_response({"data": [{"id": r["id"], "name": r["name"], "city": r["city"]}
                                   for r in sb.store.list("restaurant")]})


async def presence(request):
    sb = sb_of(request)
    rid = request.query.get("restaurant_id", "11")
    return json_response({"data": presence_list(sb, rid)})


async def sold_out(request):
    """{"product_ids": [...]}: these products are sold out (available false) from now on; emits catalog.updated."""
    from .db import iso
    sb = sb_of(request)
    rid = request.match_info["restaurant_id"]
    if not sb.restaurant(rid):
        return _err(404, f"no restaurant {rid}")
    body = await _json(request)
    ids = [str(x) for x in body.get("product_ids", [])]
    sb.store.set_meta("sold_out:" + rid, ids)
    sb.store.set_meta("catalog_updated_at", iso())
    sb.emit("catalog.updated", rid, {"sold_out": ids})
    return json_response({"restaurant_id": rid, "sold_out": ids})


# Synthetic events (POST /_sandbox/events): a type and data that describe the sandbox's state truthfully, so a client
# that acts on them (fetches the catalog again) sees nothing inconsistent. Only types whose data needs no new object.
MAX_SYNTHETIC_EVENTS = 10_000


def _catalog_updated(sb: Sandbox, rid: str) -> dict:
    """The data of catalog.updated as /_sandbox/catalog/…/sold_out emits it: the products sold out now."""
    from .catalog import products_of
    return {"sold_out": [pid for pid, p in products_of(sb, rid).items() if not p["available"]]}


SYNTHETIC_EVENTS = {"catalog.updated": _catalog_updated}


async def synthetic_events(request):
    """{"count": N, "type": "catalog.updated", "restaurant_id": "11"}: N events appended to the feed at once, for
    soak tests of event readers (producing them through the public API costs a request or more each)."""
    sb = sb_of(request)
    body = await _json(request)
    type_ = body.get("type", "catalog.updated")
    rid = str(body.get("restaurant_id") or "11")
    count = body.get("count", 1)
    if type_ not in SYNTHETIC_EVENTS:
        return _err(400, f"type is one of {', '.join(SYNTHETIC_EVENTS)}")
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_SYNTHETIC_EVENTS:
        return _err(400, f"count is an integer 1…{MAX_SYNTHETIC_EVENTS}")
    if not sb.restaurant(rid):
        return _err(404, f"no restaurant {rid}")
    from . import events
    data = SYNTHETIC_EVENTS[type_](sb, rid)
    ids = sb.emit_many(type_, rid, [dict(data) for _ in range(count)])
    return json_response({"type": type_, "restaurant_id": rid, "ids": ids, "next_cursor": events.end_cursor(sb)}, 201)


async def page(request):
    return web.FileResponse(STATIC / "admin.html", headers={"Cache-Control": "no-store"})


async def page_js(request):
    return web.FileResponse(STATIC / "admin.js", headers={"Cache-Control": "no-store"})


def routes(app: web.Application) -> None:
    app.middlewares.insert(0, loopback_only)
    r = app.router
    r.add_get("/_sandbox/pairings", pairings)
    r.add_post("/_sandbox/pairings/{user_code}/{decision:approve|deny}", decide)
    r.add_get("/_sandbox/devices", devices)
    r.add_delete("/_sandbox/devices/{device_id}", unpair)
    r.add_post("/_sandbox/tokens/expire", expire_tokens)
    r.add_post("/_sandbox/tokens", mint_token)
    r.add_post("/_sandbox/consents/auto", auto_consent)
    r.add_post("/_sandbox/faults", add_fault)
    r.add_get("/_sandbox/faults", list_faults)
    r.add_delete("/_sandbox/faults", clear_faults)
    r.add_delete("/_sandbox/faults/{fault_id}", delete_fault)
    r.add_get("/_sandbox/stream", stream)
    r.add_post("/_sandbox/stream", stream)
    r.add_post("/_sandbox/stream/cut", stream_cut)
    r.add_post("/_sandbox/cursors/expire", expire_cursors)
    r.add_post("/_sandbox/restart", restart)
    r.add_get("/_sandbox/config", config)
    r.add_post("/_sandbox/config", config)
    r.add_post("/_sandbox/reset", reset)
    r.add_get("/_sandbox/stats", stats)
    r.add_delete("/_sandbox/stats", stats)
    r.add_get("/_sandbox/commits", commits)
    r.add_delete("/_sandbox/commits", commits)
    r.add_get("/_sandbox/requests", requests_log)
    r.add_get("/_sandbox/events/recent", recent_events)
    r.add_get("/_sandbox/connections", connections)
    r.add_delete("/_sandbox/connections/{conn_id}", revoke_connection)
    r.add_get("/_sandbox/restaurants", restaurants)
    r.add_get("/_sandbox/presence", presence)
    r.add_post("/_sandbox/catalog/{restaurant_id}/sold_out", sold_out)
    r.add_post("/_sandbox/events", synthetic_events)
    r.add_get("/admin", page)
    r.add_get("/admin/", page)
    r.add_get("/admin/admin.js", page_js)
