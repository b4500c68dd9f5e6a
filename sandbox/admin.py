"""The admin JSON API under /_sandbox/ (loopback only, no auth, not part of the contract) and the admin page: their
routes, in one table. The handlers: admin_connections.py (pairing codes, devices, tokens, automatic consent,
partner consents in bulk, connections), admin_control.py (faults, the stream service, cursors, restart, settings,
reset, sold-out products, synthetic events, the event generator), admin_console.py (what the admin page reads, and the page)."""
from __future__ import annotations

from aiohttp import web

from .admin_common import loopback_only
from .admin_connections import (auto_consent, bulk_consents, connections, decide, devices, expire_tokens, mint_token,
                                pairings, revoke_connection, unpair)
from .admin_console import commits, page, page_js, presence, recent_events, requests_log, restaurants, stats
from .admin_control import (add_fault, clear_faults, config, delete_fault, events_generator, expire_cursors, list_faults,
                            reset, restart, sold_out, stream, stream_cut, stream_stall,
                            synthetic_events)


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
    r.add_post("/_sandbox/consents/bulk", bulk_consents)
    r.add_post("/_sandbox/faults", add_fault)
    r.add_get("/_sandbox/faults", list_faults)
    r.add_delete("/_sandbox/faults", clear_faults)
    r.add_delete("/_sandbox/faults/{fault_id}", delete_fault)
    r.add_get("/_sandbox/stream", stream)
    r.add_post("/_sandbox/stream", stream)
    r.add_post("/_sandbox/stream/cut", stream_cut)
    r.add_post("/_sandbox/stream/stall", stream_stall)
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
    r.add_get("/_sandbox/events/generator", events_generator)
    r.add_post("/_sandbox/events/generator", events_generator)
    r.add_delete("/_sandbox/events/generator", events_generator)
    r.add_get("/admin", page)
    r.add_get("/admin/", page)
    r.add_get("/admin/admin.js", page_js)
