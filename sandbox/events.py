"""The event feed: GET /v2/events pages by cursor, GET /v2/events/stream as Server-Sent Events
(id = cursor, Last-Event-ID resume, heartbeat comments), expired cursors 410, the stream service up/down/cut.
Events come from the handlers' writes (Sandbox.emit), in bulk for soak tests from POST /_sandbox/events
(admin_control.py), and at a steady rate per restaurant from the event generator (generator.py). A stream sleeps until
an event of a restaurant it reads is appended (Sandbox.watch_events), so a thousand open streams cost nothing while
other restaurants' events flow."""
from __future__ import annotations

import asyncio
import calendar
import json
import logging
import re
import time

from aiohttp import web

from .db import iso, now
from .errors import ApiError, json_response, problem
from .operation import Ctx, operation
from .paging import comma_list, page_limit, schema_enum
from .state import SANDBOX, Sandbox

log = logging.getLogger("sandbox.events")
CURSOR_RE = re.compile(r"^ev_c_([0-9]+)_([0-9]+)$")


def cursor(sb: Sandbox, seq: int) -> str:
    return f"ev_c_{sb.store.meta('cursor_epoch', 1)}_{seq:08d}"


def end_cursor(sb: Sandbox) -> str:
    """The position after the newest event: what a client stores after reloading its state (410 next_cursor)."""
    return cursor(sb, sb.store.last_event_seq())


def parse_cursor(sb: Sandbox, text: str) -> int:
    m = CURSOR_RE.match(text or "")
    if not m:
        raise ApiError("cursor_invalid", "Send back only a cursor the server gave.")
    epoch, seq = int(m.group(1)), int(m.group(2))
    current = sb.store.meta("cursor_epoch", 1)
    if epoch < current:
        raise ApiError("cursor_expired", "The cursor expired: reload your state, then read on from next_cursor.",
                       next_cursor=end_cursor(sb))
    if epoch > current or seq > sb.store.last_event_seq():
        raise ApiError("cursor_invalid", "This cursor was never issued.")
    if seq > 0:  # events are kept event_retention seconds (7 days): an older position is gone
        seen = sb.store.events_after(seq - 1, seq)
        if seen and _age(seen[0][1]["occurred_at"]) > float(sb.config["event_retention"]):
            raise ApiError("cursor_expired", "Events older than the retention are gone: reload, then read on from next_cursor.",
                           next_cursor=end_cursor(sb))
    return seq


def _age(occurred_at: str) -> float:
    whole, _, fraction = occurred_at.rstrip("Z").partition(".")  # the generator's events carry milliseconds
    moment = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + (float("0." + fraction) if fraction else 0)
    return now() - moment


def _filters(ctx: Ctx) -> tuple[list[str] | None, set[str]]:
    types = comma_list(ctx.request, "types", schema_enum("EventType"))
    rid = ctx.request.query.get("restaurant_id")
    reach = set(ctx.conn.restaurant_ids)
    if rid is not None:
        if not ctx.sb.restaurant(rid):
            raise ApiError("not_found", f"No restaurant {rid}.")
        if rid not in reach:
            raise ApiError("restaurant_forbidden", f"This connection may not reach restaurant {rid}.")
        reach = {rid}
    return types, reach


def _visible(ev: dict, types, reach) -> bool:
    return ev["restaurant_id"] in reach and (not types or ev["type"] in types)


@operation("listEvents")
async def list_events(ctx: Ctx) -> web.Response:
    sb = ctx.sb
    types, reach = _filters(ctx)
    limit = page_limit(ctx.request)
    end = sb.store.last_event_seq()
    raw = ctx.request.query.get("cursor")
    if raw is None:
        return json_response({"data": [], "next_cursor": cursor(sb, end), "has_more": False})
    pos = parse_cursor(sb, raw)
    data, last, has_more = [], end, False
    for seq, ev in sb.store.events_after(pos, end, reach):  # only the reachable restaurants' rows are read
        if not _visible(ev, types, reach):
            continue
        if len(data) == limit:
            has_more = True
            break
        data.append(ev)
        last = seq
    if not has_more:
        last = end
    return json_response({"data": data, "next_cursor": cursor(sb, last), "has_more": has_more})


@operation("streamEvents")
async def stream_events(ctx: Ctx) -> web.StreamResponse:
    sb, request = ctx.sb, ctx.request
    if sb.stream_down:
        ra = str(int(sb.stream_retry_after))
        return problem(request, "stream_unavailable", "Read GET /v2/events meanwhile.", headers={"Retry-After": ra})
    types, reach = _filters(ctx)
    start = request.headers.get("Last-Event-ID") or request.query.get("cursor")
    pos = parse_cursor(sb, start) if start else sb.store.last_event_seq()
    # Profirest-Heartbeat announces the keep-alive interval, so a client can tell a quiet stream from a dead one.
    heartbeat = float(sb.config["heartbeat"])
    announced = sb.config.get("heartbeat_announced")
    announced = heartbeat if announced is None else float(announced)
    resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store",
                                                   "X-Accel-Buffering": "no", "Profirest-Heartbeat": f"{announced:g}"})
    await resp.prepare(request)
    sb.streams.add(resp)
    resp._sandbox_request = request  # noqa: SLF001 — to close its transport on a cut
    resp._sandbox_conn = ctx.conn.id  # noqa: SLF001 — to end it when the connection goes
    resp._sandbox_opened_at = iso()  # noqa: SLF001 — the console shows since when a connection streams
    sb.stats.sse_connections += 1
    # Woken only by events of the restaurants this stream reads (or by a cut, a restart, the service going down).
    wake = asyncio.Event()
    sb.watch_events(wake, reach)
    try:
        # The first bytes at once: the reconnection time and a comment, which prove the stream got through.
        await resp.write(f"retry: {int(sb.config['sse_retry_ms'])}\n: open\n\n".encode())
        while True:
            transport = request.transport
            if transport is None or transport.is_closing() or sb.stream_down:
                break
            if getattr(resp, "_sandbox_stalled", False):
                # A silently dead connection (POST /_sandbox/stream/stall): no byte, no close, until the client goes.
                await asyncio.sleep(0.05)
                continue
            wake.clear()  # before reading: an event appended from now on sets it again
            end = sb.store.last_event_seq()
            frames = []
            for seq, ev in sb.store.events_after(pos, end, reach):
                if _visible(ev, types, reach):
                    frames.append(f"id: {cursor(sb, seq)}\nevent: {ev['type']}\ndata: {json.dumps(ev, ensure_ascii=False)}\n\n")
            pos = end
            if frames:
                for frame in frames:  # one write per frame: clients see each event as it is flushed
                    await resp.write(frame.encode())
                continue
            try:
                await asyncio.wait_for(wake.wait(), timeout=heartbeat)
            except asyncio.TimeoutError:
                await resp.write(b": keep-alive\n\n")
    except (ConnectionError, RuntimeError, asyncio.CancelledError):
        pass
    finally:
        sb.unwatch_events(wake, reach)
        sb.streams.discard(resp)
    return resp


async def cut_streams(sb: Sandbox, conn_id: str | None = None) -> int:
    n = 0
    for resp in list(sb.streams):
        if conn_id is not None and getattr(resp, "_sandbox_conn", None) != conn_id:
            continue
        req = getattr(resp, "_sandbox_request", None)
        if req is not None and req.transport is not None:
            req.transport.close()
            n += 1
        sb.streams.discard(resp)
    await sb.notify_events()
    return n


def stall_streams(sb: Sandbox, conn_id: str | None = None) -> int:
    """Makes the open streams (or one connection's) silent for good: no event, no keep-alive, and no close — what a
    client sees of a connection that died while its device slept or its network changed. Later streams are not."""
    n = 0
    for resp in list(sb.streams):
        if conn_id is not None and getattr(resp, "_sandbox_conn", None) != conn_id:
            continue
        resp._sandbox_stalled = True  # noqa: SLF001
        n += 1
    return n


async def close_streams(app: web.Application) -> None:
    await cut_streams(app[SANDBOX])
