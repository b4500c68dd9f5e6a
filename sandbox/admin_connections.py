"""The admin API of connections: pending pairing codes and their decision, devices, tokens minted or expired at
once, partner consents in bulk, automatic consent, and every device and partner grant with what it does (the
console's Connections tab)."""
from __future__ import annotations

import json

from . import connection, contract, oauth, pairing, restaurants
from .admin_common import err, open_streams, read_json, sb_of
from .clients import CLIENTS, client_name
from .db import iso, now
from .errors import json_response
from .events import cut_streams
from .state import new_id


async def pairings(request):
    return json_response({"data": pairing.pending_pairings(sb_of(request))})


async def decide(request):
    sb = sb_of(request)
    body = await read_json(request)
    approve = request.match_info["decision"] == "approve"
    try:
        out = pairing.decide_pairing(sb, request.match_info["user_code"], approve, str(body.get("restaurant_id") or "11"))
    except KeyError as e:
        return err(404, e.args[0])
    except ValueError as e:
        return err(409, str(e))
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
        return err(404, "no such paired device")
    return json_response({"unpaired": request.match_info["device_id"]})


async def expire_tokens(request):
    body = await read_json(request)
    n = connection.expire_access_tokens(sb_of(request), body.get("device_id"), body.get("client_id"))
    return json_response({"expired": n})


async def mint_token(request):
    """A paired device (or a partner connection) at once, without the flow: for tests and scripts."""
    sb = sb_of(request)
    body = await read_json(request)
    cid = body.get("client_id", "profirest-pos")
    client = CLIENTS.get(cid)
    if not client:
        return err(404, f"unknown client {cid}")
    scopes = body.get("scopes") or contract.all_scopes()
    if client["kind"] == "device":
        rid = str(body.get("restaurant_id") or "11")
        if not sb.restaurant(rid):
            return err(404, f"no restaurant {rid}")
        dev_id = new_id("dev_", 6)
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


MAX_BULK_CONSENTS = 10_000


async def bulk_consents(request):
    """{"count": 1000, "client_id": "moje-aplikace", "scope": "restaurants:read events:read"}: `count` partner
    consents at once, as if that many owners had each approved the partner for a restaurant of their own — a new
    restaurant each (or, with "restaurant_ids", all for those) — with their tokens; for benchmarks of partner servers.
    One commit for all: a thousand take well under a second."""
    sb = sb_of(request)
    body = await read_json(request)
    cid = body.get("client_id", "moje-aplikace")
    client = CLIENTS.get(cid)
    if not client or client["kind"] != "partner":
        partners = ", ".join(c for c, v in CLIENTS.items() if v["kind"] == "partner")
        return err(400, f"client_id is a partner client ({partners})")
    count = body.get("count", 1)
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_BULK_CONSENTS:
        return err(400, f"count is an integer 1…{MAX_BULK_CONSENTS}")
    scope = body.get("scope", body.get("scopes"))
    scopes = scope.split() if isinstance(scope, str) else list(scope or contract.all_scopes())
    unknown = [s for s in scopes if s not in contract.all_scopes()]
    if unknown or not scopes:
        return err(400, f"unknown scopes: {' '.join(unknown)}" if unknown else "no scope")
    shared = body.get("restaurant_ids")
    if shared is not None:
        shared = [str(r) for r in shared]
        missing = [r for r in shared if not sb.restaurant(r)]
        if not shared or missing:
            return err(404, f"no restaurant {', '.join(missing)}" if missing else "restaurant_ids is empty")
    out = []
    with sb.store.transaction():
        rids = [shared] * count if shared else [[r] for r in restaurants.add_restaurants(sb, count)]
        for reach in rids:
            grant_id = new_id("grant_", 10)
            sb.store.put("grant", grant_id, {"id": grant_id, "client_id": cid, "restaurant_ids": reach,
                                             "scopes": scopes, "active": True, "created_at": iso(), "issuer": None})
            tokens = oauth.issue_tokens(sb, "partner", grant_id, cid, scopes)
            out.append({"connection_id": grant_id, "restaurant_id": reach[0], "restaurant_ids": reach, **tokens})
    return json_response({"client_id": cid, "scopes": scopes, "count": count, "data": out}, 201)


async def auto_consent(request):
    sb = sb_of(request)
    body = await read_json(request)
    decision = body.get("decision")
    if decision not in ("approve", "deny", None):
        return err(400, "decision is approve, deny or null")
    sb.auto_consent = None if decision is None else {"decision": decision,
                                                     "restaurant_ids": body.get("restaurant_ids") or ["11"]}
    return json_response({"auto_consent": sb.auto_consent})


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
    streams = open_streams(sb)
    rows = []
    for d in sb.store.list("device"):
        rows.append({"id": d["id"], "kind": "device", "client_id": d["client_id"], "name": d["name"],
                     "restaurant_ids": [d["restaurant_id"]], "active": bool(d.get("active")),
                     "paired_at": d.get("paired_at"), "last_seen_at": d.get("last_seen_at"),
                     "issuer": d.get("issuer")})
    for g in sb.store.list("grant"):
        rows.append({"id": g["id"], "kind": "partner", "client_id": g["client_id"], "name": client_name(g["client_id"]),
                     "restaurant_ids": list(g["restaurant_ids"]), "active": bool(g.get("active")),
                     "paired_at": None, "last_seen_at": None, "issuer": g.get("issuer")})
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
            return err(404, "no such paired device")
        return json_response({"revoked": cid, "kind": "device"})
    grant = sb.store.get("grant", cid)
    if not grant or not grant.get("active"):
        return err(404, "no such active connection")
    grant["active"] = False
    sb.store.put("grant", cid, grant)
    await cut_streams(sb, cid)
    return json_response({"revoked": cid, "kind": "partner"})
