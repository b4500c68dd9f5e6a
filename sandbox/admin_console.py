"""What the admin page reads: stats and the commit ledger, the request log, the event feed's newest events and its
readers, restaurants and who is at work; and the page itself (static/admin.html, admin.js)."""
from __future__ import annotations

from pathlib import Path

from aiohttp import web

from . import reqlog
from .admin_common import int_query, open_streams, sb_of
from .attendance import presence_list
from .errors import json_response
from .state import Sandbox
from .stats import Stats

STATIC = Path(__file__).resolve().parent / "static"


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


async def requests_log(request):
    """The last public requests (oldest first), of every connection or ?connection=<device or grant id>."""
    sb = sb_of(request)
    limit = int_query(request, "limit", 50, reqlog.PER_CONNECTION * 10)
    return json_response({"data": sb.request_log.rows(limit, request.query.get("connection") or None)})


def _polling(sb: Sandbox) -> list[dict]:
    return [{"connection": c, **p} for c, p in sb.request_log.polls.items()]


async def recent_events(request):
    """The newest events of the feed first (without data), and who reads it: open streams and GET /v2/events pollers."""
    sb = sb_of(request)
    limit = int_query(request, "limit", 100, 1000)
    return json_response({"data": sb.store.recent_events(limit), "last_seq": sb.store.last_event_seq(),
                          "streams": open_streams(sb), "polling": _polling(sb)})


async def restaurants(request):
    sb = sb_of(request)
    return json_response({"data": [{"id": r["id"], "name": r["name"], "city": r["city"]}
                                   for r in sb.store.list("restaurant")]})


async def presence(request):
    sb = sb_of(request)
    rid = request.query.get("restaurant_id", "11")
    return json_response({"data": presence_list(sb, rid)})


async def page(request):
    return web.FileResponse(STATIC / "admin.html", headers={"Cache-Control": "no-store"})


async def page_js(request):
    return web.FileResponse(STATIC / "admin.js", headers={"Cache-Control": "no-store"})
