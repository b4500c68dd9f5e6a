"""Pairing a device by code (OAuth device authorization, RFC 8628): the device asks for a code, a manager approves
or denies it (the admin page, the admin API or `python -m sandbox approve`), the device polls the token endpoint
until then — too fast earns slow_down — and becomes a paired device with its own tokens."""
from __future__ import annotations

import secrets

from aiohttp import web

from .db import iso, now
from .errors import OAuthError, json_response
from .oauth import check_scopes, client_auth, issue_tokens, issuer, read_form, token_json
from .state import SANDBOX, Sandbox, new_id, token_hash

USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"


async def device_authorization(request: web.Request) -> web.Response:
    sb = request.app[SANDBOX]
    try:
        form = await read_form(sb, request, "DeviceAuthorizationRequest")
        cid, client = client_auth(request, form)
        if client["kind"] != "device":
            raise OAuthError("unauthorized_client", "Only device applications pair by code.")
        scopes = check_scopes(form["scope"])
    except OAuthError as e:
        return e.response()
    while True:
        letters = "".join(secrets.choice(USER_CODE_ALPHABET) for _ in range(8))
        user_code = f"{letters[:4]}-{letters[4:]}"
        if not sb.store.get("pairing", user_code):
            break
    device_code = "dc_" + secrets.token_urlsafe(24)
    ttl, interval = int(sb.config["device_code_ttl"]), int(sb.config["poll_interval"])
    if "interval" in sb.config["omit_members"]:
        interval = 5  # what a client must use when the answer names none (RFC 8628 3.2)
    iss = issuer(request)  # the origin the device reached us at: verification_uri is on it
    sb.store.put("pairing", user_code, {
        "user_code": user_code, "device_code_hash": token_hash(device_code), "client_id": cid, "scope": " ".join(scopes),
        "device_name": form.get("device_name") or f"{cid} ({form.get('device_platform') or 'zařízení'})",
        "device_platform": form.get("device_platform"), "app_version": form.get("app_version"),
        "created": now(), "expires_at": now() + ttl, "interval": interval, "last_poll": None, "status": "pending",
        "restaurant_id": None, "issuer": iss})
    sb.store.put("device_code", token_hash(device_code), {"user_code": user_code})
    verify = iss + "/admin"
    answer = {"device_code": device_code, "user_code": user_code, "verification_uri": verify,
              "verification_uri_complete": f"{verify}?code={user_code}", "expires_in": max(1, ttl),
              "interval": max(1, interval)}
    # RFC 8628 3.2: verification_uri_complete and interval are optional (without interval a client polls every 5 s).
    for member in ("verification_uri_complete", "interval"):
        if member in sb.config["omit_members"]:
            del answer[member]
    return json_response(answer, 200, {"Cache-Control": "no-store"})


def device_code_grant(sb: Sandbox, form: dict, cid: str, client: dict) -> web.Response:
    sb.stats.device_polls += 1
    if client["kind"] != "device":
        raise OAuthError("unauthorized_client", "Only device applications use the device_code grant.")
    dc = form.get("device_code")
    if not dc:
        raise OAuthError("invalid_request", "device_code is missing.")
    ref = sb.store.get("device_code", token_hash(dc))
    p = sb.store.get("pairing", ref["user_code"]) if ref else None
    if not p or p["client_id"] != cid:
        raise OAuthError("invalid_grant", "Unknown device_code.")
    t = now()
    if p["status"] == "consumed":
        raise OAuthError("invalid_grant", "The device_code was used already.")
    if t >= p["expires_at"]:
        raise OAuthError("expired_token", "The code expired; start pairing again.")
    last = p.get("last_poll")
    p["last_poll"] = t
    if last is not None and t - last < p["interval"] - 0.2:
        p["interval"] += sb.config["slow_down_increment"]
        sb.store.put("pairing", p["user_code"], p)
        sb.stats.slow_downs += 1
        raise OAuthError("slow_down", f"Poll every {p['interval']} s.")
    if p["status"] == "pending":
        sb.store.put("pairing", p["user_code"], p)
        raise OAuthError("authorization_pending", "Waiting for a manager to confirm the code.")
    if p["status"] == "denied":
        sb.store.put("pairing", p["user_code"], p)
        raise OAuthError("access_denied", "The manager refused the device.")
    # approved: the device exists from now on
    p["status"] = "consumed"
    dev_id = new_id("dev_", 6)
    dev = {"id": dev_id, "name": p["device_name"], "platform": p.get("device_platform"),
           "app_version": p.get("app_version"), "client_id": cid, "restaurant_id": p["restaurant_id"],
           "scopes": p["scope"].split(" "), "paired_at": iso(), "last_seen_at": None, "active": True,
           "user_code": p["user_code"], "issuer": p.get("issuer")}
    sb.store.put("device", dev_id, dev, p["restaurant_id"])
    p["device_id"] = dev_id
    sb.store.put("pairing", p["user_code"], p)
    out = issue_tokens(sb, "device", dev_id, cid, dev["scopes"])
    out.update({"restaurant_id": p["restaurant_id"], "device_id": dev_id})
    return token_json(sb, out)


# -- deciding a code (shared by the admin API, the admin page and the CLI) -------------------------------
def pending_pairings(sb: Sandbox) -> list[dict]:
    out = []
    for p in sb.store.list("pairing"):
        if p["status"] == "pending" and p["expires_at"] > now():
            out.append({"user_code": p["user_code"], "client_id": p["client_id"], "device_name": p["device_name"],
                        "device_platform": p.get("device_platform"), "scope": p["scope"],
                        "expires_in": int(p["expires_at"] - now())})
    return out


def normalize_code(code: str) -> str:
    c = "".join(ch for ch in code.upper() if ch.isalpha())
    return f"{c[:4]}-{c[4:]}" if len(c) == 8 else code.upper()


def decide_pairing(sb: Sandbox, user_code: str, approve: bool, restaurant_id: str = "11") -> dict:
    """Approve or deny a pending code. Raises KeyError / ValueError with a message for the admin."""
    p = sb.store.get("pairing", normalize_code(user_code))
    if not p:
        raise KeyError(f"No pairing code {user_code}.")
    if p["expires_at"] <= now():
        raise ValueError(f"The code {user_code} expired.")
    if p["status"] != "pending":
        raise ValueError(f"The code {user_code} was {p['status']} already.")
    if approve and not sb.restaurant(restaurant_id):
        raise KeyError(f"No restaurant {restaurant_id}.")
    p["status"] = "approved" if approve else "denied"
    p["restaurant_id"] = restaurant_id if approve else None
    sb.store.put("pairing", p["user_code"], p)
    return {"user_code": p["user_code"], "status": p["status"], "restaurant_id": p["restaurant_id"]}


def routes(app: web.Application) -> None:
    app.router.add_post("/oauth/device_authorization", device_authorization)
