"""What the admin API's handlers share: loopback only, JSON in and out, the sandbox of a request; and the open
event streams as the console lists them."""
from __future__ import annotations

import json

from aiohttp import web

from .errors import json_response
from .state import SANDBOX, Sandbox

LOOPBACK = {"127.0.0.1", "::1", "::ffff:127.0.0.1"}


def err(status: int, message: str) -> web.Response:
    return json_response({"error": message}, status)


async def read_json(request: web.Request) -> dict:
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
        return err(403, "the admin API answers on loopback only")
    return await handler(request)


def sb_of(request: web.Request) -> Sandbox:
    return request.app[SANDBOX]


def int_query(request: web.Request, name: str, default: int, top: int) -> int:
    try:
        return max(1, min(top, int(request.query.get(name, str(default)))))
    except ValueError:
        return default


def open_streams(sb: Sandbox) -> list[dict]:
    return [{"connection": getattr(r, "_sandbox_conn", None), "opened_at": getattr(r, "_sandbox_opened_at", None)}
            for r in list(sb.streams)]
