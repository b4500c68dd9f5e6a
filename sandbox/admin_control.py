"""The admin API's levers for tests: faults, the stream service down or cut, cursors expired, a restart, the
settings, a reset to the seed data, products sold out, synthetic events in bulk and the event generator (a steady rate
per restaurant, generator.py)."""
from __future__ import annotations

import asyncio

from . import faults, seed
from .admin_common import err, read_json, sb_of
from .catalog import products_of
from .db import iso
from .errors import json_response
from .events import cut_streams, end_cursor, stall_streams
from .generator import EventGenerator, stopped_status
from .origin import normalize_public_url
from .state import DEFAULT_CONFIG, OMITTABLE_MEMBERS, Sandbox
from .stats import Stats


async def add_fault(request):
    try:
        f = faults.add_fault(sb_of(request), await read_json(request))
    except faults.FaultError as e:
        return err(400, str(e))
    return json_response(f, 201)


async def list_faults(request):
    return json_response({"data": faults.listing(sb_of(request))})


async def delete_fault(request):
    sb = sb_of(request)
    before = len(sb.faults)
    sb.faults[:] = [f for f in sb.faults if f["id"] != request.match_info["fault_id"]]
    if len(sb.faults) == before:
        return err(404, "no such fault")
    return json_response({"data": faults.listing(sb)})


async def clear_faults(request):
    sb_of(request).faults.clear()
    return json_response({"data": []})


async def stream(request):
    sb = sb_of(request)
    body = await read_json(request)
    if "retry_after" in body:
        sb.stream_retry_after = int(body["retry_after"])
    if "down" in body:
        sb.stream_down = bool(body["down"])
        if sb.stream_down:
            await cut_streams(sb)
    return json_response({"down": sb.stream_down, "retry_after": sb.stream_retry_after, "open": len(sb.streams)})


async def stream_cut(request):
    """Closes the open streams now: every one, or with {"connection": id} only that connection's."""
    body = await read_json(request)
    return json_response({"cut": await cut_streams(sb_of(request), body.get("connection"))})


async def stream_stall(request):
    """Makes the open streams silent without closing them: every one, or with {"connection": id} only that one's."""
    body = await read_json(request)
    return json_response({"stalled": stall_streams(sb_of(request), body.get("connection"))})


async def expire_cursors(request):
    sb = sb_of(request)
    sb.store.set_meta("cursor_epoch", sb.store.meta("cursor_epoch", 1) + 1)
    return json_response({"cursor_epoch": sb.store.meta("cursor_epoch")})


async def restart(request):
    sb = sb_of(request)
    body = await read_json(request)
    down = float(body.get("down_ms", 200)) / 1000
    if sb.restart_hook is None:
        return err(409, "not running under the sandbox runner")

    async def later():
        await asyncio.sleep(0.05)
        await sb.restart_hook(down)

    asyncio.get_running_loop().create_task(later())
    return json_response({"restarting": True, "down_ms": int(down * 1000)}, 202, {"Connection": "close"})


async def config(request):
    sb = sb_of(request)
    if request.method == "POST":
        body = await read_json(request)
        unknown = [k for k in body if k not in DEFAULT_CONFIG]
        if unknown:
            return err(400, f"unknown settings: {', '.join(unknown)}")
        for k, v in body.items():
            if k == "public_url":  # an origin (https://host:port) every advertised URL is built on, or null
                if v is not None and not isinstance(v, str):
                    return err(400, "public_url is https://host[:port] (or http://…) or null")
                try:
                    v = None if v is None else normalize_public_url(v)
                except ValueError as e:
                    return err(400, str(e))
            elif k == "heartbeat_announced" and v is None:
                pass
            elif k == "omit_members":
                if not isinstance(v, list) or any(m not in OMITTABLE_MEMBERS for m in v):
                    return err(400, f"omit_members is a list of {', '.join(OMITTABLE_MEMBERS)}")
                v = list(dict.fromkeys(v))
            elif not isinstance(v, (int, float)) or v < 0:
                return err(400, f"{k} is a number ≥ 0")
            sb.config[k] = v
    return json_response(sb.config)


async def reset(request):
    sb = sb_of(request)
    if sb.generator is not None:
        sb.generator.stop()
        sb.generator = None
    seed.reset(sb)
    sb.faults.clear()
    sb.auto_consent = None
    sb.stream_down = False
    sb.stats = Stats()
    sb.request_log.clear()
    return json_response({"reset": True})


async def sold_out(request):
    """{"product_ids": [...]}: these products are sold out (available false) from now on; emits catalog.updated."""
    sb = sb_of(request)
    rid = request.match_info["restaurant_id"]
    if not sb.restaurant(rid):
        return err(404, f"no restaurant {rid}")
    body = await read_json(request)
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
    return {"sold_out": [pid for pid, p in products_of(sb, rid).items() if not p["available"]]}


SYNTHETIC_EVENTS = {"catalog.updated": _catalog_updated}


async def synthetic_events(request):
    """{"count": N, "type": "catalog.updated", "restaurant_id": "11"}: N events appended to the feed at once, for
    soak tests of event readers (producing them through the public API costs a request or more each)."""
    sb = sb_of(request)
    body = await read_json(request)
    type_ = body.get("type", "catalog.updated")
    rid = str(body.get("restaurant_id") or "11")
    count = body.get("count", 1)
    if type_ not in SYNTHETIC_EVENTS:
        return err(400, f"type is one of {', '.join(SYNTHETIC_EVENTS)}")
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_SYNTHETIC_EVENTS:
        return err(400, f"count is an integer 1…{MAX_SYNTHETIC_EVENTS}")
    if not sb.restaurant(rid):
        return err(404, f"no restaurant {rid}")
    data = SYNTHETIC_EVENTS[type_](sb, rid)
    ids = sb.emit_many(type_, rid, [dict(data) for _ in range(count)])
    return json_response({"type": type_, "restaurant_id": rid, "ids": ids, "next_cursor": end_cursor(sb)}, 201)


MAX_GENERATOR_RESTAURANTS = 10_000


async def events_generator(request):
    """The event generator (generator.py). POST {"rate": 1, "restaurant_ids": [...]} — or "client_id": the restaurants
    of that partner's active grants — starts it (replacing one that runs): `rate` events a second for each restaurant,
    catalog.updated (the "type" of POST /_sandbox/events). POST {"rate": 0} or DELETE stops it; GET says how it goes."""
    sb = sb_of(request)
    if request.method == "POST":
        body = await read_json(request)
        rate = body.get("rate", 1)
        if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not 0 <= rate <= 100:
            return err(400, "rate is a number 0…100 (events a second per restaurant; 0 stops)")
        type_ = body.get("type", "catalog.updated")
        if type_ not in SYNTHETIC_EVENTS:
            return err(400, f"type is one of {', '.join(SYNTHETIC_EVENTS)}")
        if rate > 0:
            if body.get("restaurant_ids") is not None:
                rids = [str(r) for r in body["restaurant_ids"]]
            elif body.get("client_id"):
                rids = sorted({r for g in sb.store.list("grant") if g.get("active") and g["client_id"] == body["client_id"]
                               for r in g["restaurant_ids"]}, key=lambda r: (len(r), r))
            else:
                return err(400, "name the restaurants: restaurant_ids, or client_id (its partner grants' restaurants)")
            missing = [r for r in rids if not sb.restaurant(r)]
            if not rids or missing or len(rids) > MAX_GENERATOR_RESTAURANTS:
                return err(404 if missing else 400, f"no restaurant {', '.join(missing[:5])}" if missing
                           else f"1…{MAX_GENERATOR_RESTAURANTS} restaurants")
        if sb.generator is not None:
            sb.generator.stop()
            sb.generator = None
        if rate > 0:
            sb.generator = EventGenerator(sb, rids, float(rate), type_, SYNTHETIC_EVENTS[type_])
            sb.generator.start()
    elif request.method == "DELETE" and sb.generator is not None:
        sb.generator.stop()
        sb.generator = None
    return json_response(sb.generator.status() if sb.generator is not None else stopped_status())
