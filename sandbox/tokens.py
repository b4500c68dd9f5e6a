"""The token endpoint (POST /oauth/token: the device_code, authorization_code and refresh_token grants; a public
client's refresh token is single-use and rotates, a lost answer is replayed within the grace window — none with
refresh_grace 0, strict rotation: every second use is invalid_grant) and revocation
(POST /oauth/revoke, RFC 7009: a revoked refresh token ends its device's pairing or its partner's grant)."""
from __future__ import annotations

from aiohttp import web

from .connection import unpair
from .consent import authorization_code_grant
from .db import now
from .errors import OAuthError
from .oauth import DEVICE_GRANT, client_auth, issue_tokens, read_form, token_json
from .pairing import device_code_grant
from .state import SANDBOX, Sandbox, token_hash


async def token(request: web.Request) -> web.Response:
    sb = request.app[SANDBOX]
    try:
        form = await read_form(sb, request, "TokenRequest")
        cid, client = client_auth(request, form)
        grant = form["grant_type"]
        if grant == DEVICE_GRANT:
            return device_code_grant(sb, form, cid, client)
        if grant == "authorization_code":
            return authorization_code_grant(sb, form, cid, client)
        return _refresh_grant(sb, form, cid, client)
    except OAuthError as e:
        return e.response()


def _refresh_grant(sb: Sandbox, form: dict, cid: str, client: dict) -> web.Response:
    rt = form.get("refresh_token")
    if not rt:
        raise OAuthError("invalid_request", "refresh_token is missing.")
    th = token_hash(rt)
    tok = sb.store.get("token", th)
    if not tok or tok["type"] != "refresh" or tok["client_id"] != cid or tok.get("revoked"):
        raise OAuthError("invalid_grant", "Unknown or revoked refresh token.")
    if tok.get("used"):
        replay = tok.get("replay")
        successor = sb.store.get("token", token_hash(replay["refresh_token"])) if replay else None
        grace = sb.config["refresh_grace"]
        if replay and grace > 0 and now() - tok["used_at"] <= grace and successor and not successor.get("used") \
                and not successor.get("revoked"):
            # The client lost our answer: the same new tokens again, so a retry does not unpair it.
            sb.stats.refresh_replays += 1
            return token_json(sb, replay)
        sb.stats.refresh_reuse += 1
        raise OAuthError("invalid_grant", "This refresh token was used already (single-use, rotating).")
    if tok["conn_kind"] == "device":
        dev = sb.store.get("device", tok["conn"])
        if not dev or not dev.get("active"):
            raise OAuthError("invalid_grant", "The device was unpaired.")
    else:
        grant = sb.store.get("grant", tok["conn"])
        if not grant or not grant.get("active"):
            raise OAuthError("invalid_grant", "The connection was revoked.")
    # Left out (omit_members), the refresh token is not rotated: the client keeps the one it has (RFC 6749 6).
    rotate = client["public"] and "refresh_token" not in sb.config["omit_members"]
    if rotate:
        tok["used"] = True
        tok["used_at"] = now()
        sb.store.put("token", th, tok)
    sb.stats.token_refreshes[cid] += 1
    sb.stats.conn_refreshes[tok["conn"]] += 1
    ttl = tok.get("access_ttl")
    if ttl and tok["access_expires_at"] - now() > ttl / 2:
        # The access token that came with this refresh token still had more than half its life: a second refresh
        # within one lifetime (clients that share a connection should have adopted the first one's tokens).
        sb.stats.refresh_early += 1
    out = issue_tokens(sb, tok["conn_kind"], tok["conn"], cid, tok["scopes"], with_refresh=rotate)
    if tok["conn_kind"] == "device":
        out.update({"restaurant_id": dev["restaurant_id"], "device_id": dev["id"]})
    if rotate:
        tok["replay"] = out  # kept for the grace window only; this is a local test server
        sb.store.put("token", th, tok)
    return token_json(sb, out)


async def revoke(request: web.Request) -> web.Response:
    sb = request.app[SANDBOX]
    try:
        form = await read_form(sb, request, "RevocationRequest")
        cid, _client = client_auth(request, form)
    except OAuthError as e:
        return e.response()
    th = token_hash(form["token"])
    tok = sb.store.get("token", th)
    if tok and tok["client_id"] == cid:
        if tok["type"] == "refresh":
            if tok["conn_kind"] == "device":
                unpair(sb, tok["conn"])
            else:
                grant = sb.store.get("grant", tok["conn"])
                if grant:
                    grant["active"] = False
                    sb.store.put("grant", grant["id"], grant)
        tok["revoked"] = True
        sb.store.put("token", th, tok)
    return web.Response(status=200, headers={"Cache-Control": "no-store"})


def routes(app: web.Application) -> None:
    app.router.add_post("/oauth/token", token)
    app.router.add_post("/oauth/revoke", revoke)
