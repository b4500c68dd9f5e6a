"""What an access token stands for — a paired device or a partner's grant — and ending it: GET/DELETE
/v2/connection, unpairing a device (its tokens fail at once, its event streams end) and, for tests, expiring
access tokens now."""
from __future__ import annotations

import asyncio
import json

from aiohttp import web

from .auth import Conn, authenticate
from .db import iso, now
from .errors import json_response
from .events import cut_streams
from .state import SANDBOX, Sandbox


def device_info(dev: dict) -> dict:
    out = {"id": dev["id"], "name": dev["name"], "client_id": dev["client_id"], "paired_at": dev["paired_at"],
           "last_seen_at": dev.get("last_seen_at")}
    if dev.get("platform"):
        out["platform"] = dev["platform"]
    if dev.get("app_version"):
        out["app_version"] = dev["app_version"]
    return out


def unpair(sb: Sandbox, device_id: str) -> bool:
    dev = sb.store.get("device", device_id)
    if not dev or not dev.get("active"):
        return False
    dev["active"] = False
    dev["unpaired_at"] = iso()
    sb.store.put("device", device_id, dev, dev["restaurant_id"])
    sb.emit("device.unpaired", dev["restaurant_id"], {"device_id": device_id})
    _end_streams(sb, device_id)
    return True


def _end_streams(sb: Sandbox, conn_id: str) -> None:
    try:
        asyncio.get_running_loop().create_task(cut_streams(sb, conn_id))
    except RuntimeError:
        pass


def disconnect(sb: Sandbox, conn: Conn) -> None:
    if conn.kind == "device":
        unpair(sb, conn.id)
    else:
        grant = sb.store.get("grant", conn.id)
        if grant:
            grant["active"] = False
            sb.store.put("grant", conn.id, grant)
            _end_streams(sb, conn.id)


def expire_access_tokens(sb: Sandbox, device_id: str | None = None, client_id: str | None = None) -> int:
    n = 0
    for row in sb.store.conn.execute("SELECT id, data FROM objects WHERE kind='token'").fetchall():
        tok = json.loads(row[1])
        if tok["type"] != "access" or tok["expires_at"] <= now():
            continue
        if device_id and tok["conn"] != device_id:
            continue
        if client_id and tok["client_id"] != client_id:
            continue
        tok["expires_at"] = now() - 1
        sb.store.put("token", row[0], tok)
        n += 1
    return n


async def get_connection(request: web.Request) -> web.Response:
    sb = request.app[SANDBOX]
    conn = authenticate(sb, request)
    restaurants = [{"id": r["id"], "name": r["name"], "city": r["city"]}
                   for r in (sb.restaurant(rid) for rid in conn.restaurant_ids) if r]
    out = {"client_id": conn.client_id, "kind": conn.kind, "restaurant_id": conn.restaurant_id,
           "restaurants": restaurants, "scopes": conn.scopes}
    if conn.device:
        out["device"] = device_info(conn.device)
    return json_response(out)


async def delete_connection(request: web.Request) -> web.Response:
    sb = request.app[SANDBOX]
    conn = authenticate(sb, request)
    disconnect(sb, conn)
    return web.Response(status=204)


def routes(app: web.Application) -> None:
    app.router.add_get("/v2/connection", get_connection)
    app.router.add_delete("/v2/connection", delete_connection)
