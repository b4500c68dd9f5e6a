"""OAuth 2: metadata, device authorization (RFC 8628), authorization code + PKCE (RFC 7636, RFC 9207), tokens with
single-use rotating refresh tokens, revocation (RFC 7009), client_secret_basic; and GET/DELETE /v2/connection."""
from __future__ import annotations

import base64
import hashlib
import hmac
import html
import secrets
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from aiohttp import web

from . import contract
from .auth import Conn, authenticate
from .bodies import read_body
from .clients import CLIENTS, client_name
from .db import iso, now
from .errors import ApiError, OAuthError, json_response
from .state import Sandbox, new_id, token_hash

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"


def issuer(sb: Sandbox) -> str:
    return sb.base_url


# -- helpers ------------------------------------------------------------------------------------------
async def read_form(sb: Sandbox, request: web.Request, schema: str) -> dict[str, str]:
    if request.headers.get("Content-Type", "").split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
        raise OAuthError("invalid_request", "Send application/x-www-form-urlencoded.")
    try:
        raw = await read_body(sb, request, 64 * 1024)
    except ApiError:
        raise OAuthError("invalid_request", "The form is too large.")
    try:
        pairs = parse_qsl(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        raise OAuthError("invalid_request", "The form cannot be parsed.")
    form: dict[str, str] = {}
    for k, v in pairs:
        if k in form:
            raise OAuthError("invalid_request", f"{k} is repeated.")
        form[k] = v
    if "client_secret" in form:
        raise OAuthError("invalid_request", "Confidential clients authenticate with HTTP Basic (client_secret_basic).")
    errors = contract.field_errors(schema, form)
    if errors:
        raise OAuthError("invalid_request", "; ".join(f"{e['pointer'].lstrip('/')}: {e['code']}" for e in errors))
    return form


def client_auth(request: web.Request, form: dict[str, str]) -> tuple[str, dict]:
    """The authenticated client: HTTP Basic for confidential clients, client_id for public ones."""
    header = request.headers.get("Authorization", "")
    if header.lower().startswith("basic "):
        try:
            cid, _, secret = base64.b64decode(header[6:].strip()).decode("utf-8").partition(":")
            cid, secret = unquote(cid.replace("+", " ")), unquote(secret.replace("+", " "))
        except (ValueError, UnicodeDecodeError):
            raise OAuthError("invalid_client", "Malformed Basic credentials.", 401, {"WWW-Authenticate": 'Basic realm="profirest"'})
        client = CLIENTS.get(cid)
        if not client or client["public"] or not hmac.compare_digest(client.get("secret", ""), secret):
            raise OAuthError("invalid_client", "Client authentication failed.", 401, {"WWW-Authenticate": 'Basic realm="profirest"'})
        if form.get("client_id") not in (None, cid):
            raise OAuthError("invalid_request", "client_id differs from the authenticated client.")
        return cid, client
    cid = form.get("client_id")
    if not cid:
        raise OAuthError("invalid_client", "client_id is missing.", 401)
    client = CLIENTS.get(cid)
    if not client:
        raise OAuthError("invalid_client", f"Unknown client {cid}.", 401)
    if not client["public"]:
        raise OAuthError("invalid_client", "This client must authenticate with HTTP Basic.", 401,
                         {"WWW-Authenticate": 'Basic realm="profirest"'})
    return cid, client


def check_scopes(scope: str) -> list[str]:
    scopes = [s for s in scope.split(" ") if s]
    unknown = [s for s in scopes if s not in contract.all_scopes()]
    if not scopes or unknown:
        raise OAuthError("invalid_scope", f"Unknown scopes: {' '.join(unknown)}" if unknown else "No scope.")
    return scopes


def issue_tokens(sb: Sandbox, conn_kind: str, conn_id: str, client_id: str, scopes: list[str],
                 with_refresh: bool = True) -> dict:
    at = "at_" + secrets.token_urlsafe(24)
    ttl = int(sb.config["access_token_ttl"])
    sb.store.put("token", token_hash(at), {"type": "access", "conn": conn_id, "conn_kind": conn_kind,
                                           "client_id": client_id, "scopes": scopes, "expires_at": now() + ttl,
                                           "issued_at": now()})
    out = {"access_token": at, "token_type": "Bearer", "expires_in": max(1, ttl), "scope": " ".join(scopes)}
    if with_refresh:
        rt = "rt_" + secrets.token_urlsafe(24)
        sb.store.put("token", token_hash(rt), {"type": "refresh", "conn": conn_id, "conn_kind": conn_kind,
                                               "client_id": client_id, "scopes": scopes, "issued_at": now()})
        out["refresh_token"] = rt
    return out


def token_json(data: dict) -> web.Response:
    return json_response(data, 200, {"Cache-Control": "no-store", "Pragma": "no-cache"})


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
    from .events import cut_streams
    try:
        import asyncio
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
        import json
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


def device_info(dev: dict) -> dict:
    out = {"id": dev["id"], "name": dev["name"], "client_id": dev["client_id"], "paired_at": dev["paired_at"],
           "last_seen_at": dev.get("last_seen_at")}
    if dev.get("platform"):
        out["platform"] = dev["platform"]
    if dev.get("app_version"):
        out["app_version"] = dev["app_version"]
    return out


# -- pairing (shared by the admin API, the admin page and the CLI) --------------------------------------
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


# -- endpoints ----------------------------------------------------------------------------------------
async def metadata(request: web.Request) -> web.Response:
    sb: Sandbox = request.app["sb"]
    base = issuer(sb)
    return json_response({
        "issuer": base,
        "authorization_endpoint": base + "/oauth/authorize",
        "token_endpoint": base + "/oauth/token",
        "device_authorization_endpoint": base + "/oauth/device_authorization",
        "revocation_endpoint": base + "/oauth/revoke",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", DEVICE_GRANT],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
        "scopes_supported": contract.all_scopes(),
        "authorization_response_iss_parameter_supported": True,
    })


async def device_authorization(request: web.Request) -> web.Response:
    sb: Sandbox = request.app["sb"]
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
    sb.store.put("pairing", user_code, {
        "user_code": user_code, "device_code_hash": token_hash(device_code), "client_id": cid, "scope": " ".join(scopes),
        "device_name": form.get("device_name") or f"{cid} ({form.get('device_platform') or 'zařízení'})",
        "device_platform": form.get("device_platform"), "app_version": form.get("app_version"),
        "created": now(), "expires_at": now() + ttl, "interval": interval, "last_poll": None, "status": "pending",
        "restaurant_id": None})
    sb.store.put("device_code", token_hash(device_code), {"user_code": user_code})
    verify = issuer(sb) + "/admin"
    return json_response({"device_code": device_code, "user_code": user_code, "verification_uri": verify,
                          "verification_uri_complete": f"{verify}?code={user_code}", "expires_in": max(1, ttl),
                          "interval": max(1, interval)}, 200, {"Cache-Control": "no-store"})


async def token(request: web.Request) -> web.Response:
    sb: Sandbox = request.app["sb"]
    try:
        form = await read_form(sb, request, "TokenRequest")
        cid, client = client_auth(request, form)
        grant = form["grant_type"]
        if grant == DEVICE_GRANT:
            return _device_code_grant(sb, form, cid, client)
        if grant == "authorization_code":
            return _authorization_code_grant(sb, form, cid, client)
        return _refresh_grant(sb, form, cid, client)
    except OAuthError as e:
        return e.response()


def _device_code_grant(sb: Sandbox, form: dict, cid: str, client: dict) -> web.Response:
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
           "user_code": p["user_code"]}
    sb.store.put("device", dev_id, dev, p["restaurant_id"])
    p["device_id"] = dev_id
    sb.store.put("pairing", p["user_code"], p)
    out = issue_tokens(sb, "device", dev_id, cid, dev["scopes"])
    out.update({"restaurant_id": p["restaurant_id"], "device_id": dev_id})
    return token_json(out)


def _authorization_code_grant(sb: Sandbox, form: dict, cid: str, client: dict) -> web.Response:
    if client["kind"] != "partner":
        raise OAuthError("unauthorized_client", "Device applications pair by code.")
    for f in ("code", "redirect_uri", "code_verifier"):
        if not form.get(f):
            raise OAuthError("invalid_request", f"{f} is missing.")
    rec = sb.store.get("auth_code", token_hash(form["code"]))
    if not rec or rec["client_id"] != cid or rec.get("used") or rec["expires_at"] <= now():
        raise OAuthError("invalid_grant", "The code is unknown, used, expired or of another client.")
    rec["used"] = True
    sb.store.put("auth_code", token_hash(form["code"]), rec)
    if rec["redirect_uri"] != form["redirect_uri"]:
        raise OAuthError("invalid_grant", "redirect_uri differs from the authorization request.")
    challenge = base64.urlsafe_b64encode(hashlib.sha256(form["code_verifier"].encode("ascii", "replace")).digest()).decode().rstrip("=")
    if not hmac.compare_digest(challenge, rec["code_challenge"]):
        raise OAuthError("invalid_grant", "code_verifier does not match code_challenge (PKCE S256).")
    grant_id = new_id("grant_", 8)
    sb.store.put("grant", grant_id, {"id": grant_id, "client_id": cid, "restaurant_ids": rec["restaurant_ids"],
                                     "scopes": rec["scopes"], "active": True, "created_at": iso()})
    return token_json(issue_tokens(sb, "partner", grant_id, cid, rec["scopes"]))


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
        if replay and now() - tok["used_at"] <= sb.config["refresh_grace"] and successor and not successor.get("used") \
                and not successor.get("revoked"):
            # The client lost our answer: the same new tokens again, so a retry does not unpair it.
            sb.stats.refresh_replays += 1
            return token_json(replay)
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
    rotate = client["public"]
    if rotate:
        tok["used"] = True
        tok["used_at"] = now()
        sb.store.put("token", th, tok)
    sb.stats.token_refreshes[cid] += 1
    sb.stats.conn_refreshes[tok["conn"]] += 1
    out = issue_tokens(sb, tok["conn_kind"], tok["conn"], cid, tok["scopes"], with_refresh=rotate)
    if tok["conn_kind"] == "device":
        out.update({"restaurant_id": dev["restaurant_id"], "device_id": dev["id"]})
    if rotate:
        tok["replay"] = out  # kept for the grace window only; this is a local test server
        sb.store.put("token", th, tok)
    return token_json(out)


async def revoke(request: web.Request) -> web.Response:
    sb: Sandbox = request.app["sb"]
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


# -- authorization code: the consent page ---------------------------------------------------------------
def redirect_allowed(uri: str) -> bool:
    try:
        parts = urlsplit(uri)
    except ValueError:
        return False
    if parts.fragment:
        return False
    if parts.scheme == "mojeaplikace":
        return True
    try:
        parts.port
    except ValueError:
        return False
    return parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost")


def _redirect(uri: str, params: dict[str, str]) -> web.Response:
    sep = "&" if "?" in uri else "?"
    return web.Response(status=302, headers={"Location": uri + sep + urlencode(params), "Cache-Control": "no-store"})


def _html(status: int, title: str, body: str) -> web.Response:
    page = (f"<!doctype html><html lang=\"cs\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            "<style>body{font-family:sans-serif;max-width:40em;margin:2em auto}</style></head>"
            f"<body><h1>{html.escape(title)}</h1>{body}</body></html>")
    return web.Response(status=status, body=page.encode(), content_type="text/html", charset="utf-8")


def _finish_authorization(sb: Sandbox, areq: dict, approve: bool, restaurant_ids: list[str]) -> web.Response:
    params = {"state": areq["state"]} if areq.get("state") else {}
    if not approve or not restaurant_ids:
        return _redirect(areq["redirect_uri"], {"error": "access_denied", **params, "iss": issuer(sb)})
    code = "ac_" + secrets.token_urlsafe(24)
    sb.store.put("auth_code", token_hash(code), {
        "client_id": areq["client_id"], "redirect_uri": areq["redirect_uri"], "code_challenge": areq["code_challenge"],
        "scopes": areq["scopes"], "restaurant_ids": restaurant_ids, "expires_at": now() + sb.config["auth_code_ttl"]})
    sb.store.put("consent", areq["client_id"], {"scopes": areq["scopes"], "restaurant_ids": restaurant_ids})
    return _redirect(areq["redirect_uri"], {"code": code, **params, "iss": issuer(sb)})


async def authorize(request: web.Request) -> web.Response:
    sb: Sandbox = request.app["sb"]
    q = request.query
    cid = q.get("client_id", "")
    client = CLIENTS.get(cid)
    if not client or client["kind"] != "partner":
        return _html(400, "Neznámá aplikace / Unknown application",
                     f"<p>client_id <code>{html.escape(cid)}</code> není registrovaná aplikace partnera. / "
                     "is not a registered partner application.</p>")
    ruri = q.get("redirect_uri", "")
    if not redirect_allowed(ruri):
        name = html.escape(client_name(cid))
        return _html(400, "Neplatná adresa návratu / Redirect URI not allowed",
                     f"<p>redirect_uri <code>{html.escape(ruri)}</code> není pro {name} povolená. / "
                     f"is not allowed for {name}.</p>")
    state = q.get("state")
    base = {"state": state} if state else {}
    iss = {"iss": issuer(sb)}
    if q.get("response_type") != "code":
        return _redirect(ruri, {"error": "unsupported_response_type", **base, **iss})
    if not state or len(state) < 16:
        return _redirect(ruri, {"error": "invalid_request", "error_description": "state of at least 16 characters", **base, **iss})
    challenge = q.get("code_challenge", "")
    if q.get("code_challenge_method") != "S256" or len(challenge) != 43:
        return _redirect(ruri, {"error": "invalid_request", "error_description": "PKCE S256 is required", **base, **iss})
    try:
        scopes = check_scopes(q.get("scope", ""))
    except OAuthError as e:
        # RFC 6749 4.1.2.1: the detail goes along as error_description ("Unknown scopes: …").
        return _redirect(ruri, {"error": "invalid_scope", "error_description": e.description, **base, **iss})
    areq = {"client_id": cid, "redirect_uri": ruri, "state": state, "code_challenge": challenge, "scopes": scopes}
    prompt = q.get("prompt")
    if prompt == "none":
        consent = sb.store.get("consent", cid)
        if consent and set(scopes) <= set(consent["scopes"]):
            return _finish_authorization(sb, areq, True, consent["restaurant_ids"])
        return _redirect(ruri, {"error": "access_denied", "error_description": "consent required", **base, **iss})
    auto = sb.auto_consent
    if auto and auto.get("decision") in ("approve", "deny"):
        return _finish_authorization(sb, areq, auto["decision"] == "approve", list(auto.get("restaurant_ids") or ["11"]))
    areq_id = new_id("areq_", 16)
    sb.store.put("authorization_request", areq_id, {**areq, "created": now()})
    return _consent_page(sb, areq_id, areq)


def _consent_page(sb: Sandbox, areq_id: str, areq: dict, message: str | None = None) -> web.Response:
    """The page the owner decides on. Nothing is ticked: the owner chooses the restaurants."""
    e = html.escape
    described = contract.scope_descriptions()
    scope_list = "".join(f'<li>{e(described.get(s) or s)} <small><code>{e(s)}</code></small></li>'
                         for s in areq["scopes"])
    boxes = "".join(
        f'<label><input type="checkbox" name="restaurant_id" value="{e(r["id"])}"> '
        f'{e(r["name"])} ({e(r["city"])})</label><br>'
        for r in sb.store.list("restaurant"))
    alert = f'<p role="alert" id="error"><strong>{e(message)}</strong></p>' if message else ""
    return _html(200, "Připojit aplikaci / Connect an application", f"""
<p>Aplikace <b id="client">{e(client_name(areq["client_id"]))}</b> žádá o přístup k vašim provozovnám. /
The application <b>{e(client_name(areq["client_id"]))}</b> asks for access to your restaurants.</p>
<ul id="scopes">{scope_list}</ul>
<p>Po rozhodnutí se vrátíte na / After deciding you return to <code>{e(areq["redirect_uri"])}</code></p>
{alert}<form method="post" action="/_sandbox/consent"><input type="hidden" name="request" value="{e(areq_id)}">
<fieldset><legend>Provozovny / Restaurants</legend>
{boxes}</fieldset><p><button name="decision" value="approve" id="approve">Povolit / Approve</button>
<button name="decision" value="deny" id="deny">Zamítnout / Deny</button></p></form>""")


NO_RESTAURANT = "Vyberte aspoň jednu provozovnu / Choose at least one restaurant"


async def consent_decision(request: web.Request) -> web.Response:
    """The consent page's form (not part of the contract)."""
    sb: Sandbox = request.app["sb"]
    form = await request.post()
    areq_id = form.get("request", "")
    areq = sb.store.get("authorization_request", areq_id)
    if not areq:
        return _html(400, "Žádost vypršela / The request expired",
                     "<p>Začněte připojení znovu. / Start connecting again.</p>")
    approve = form.get("decision") == "approve"
    rids = [r for r in form.getall("restaurant_id", []) if sb.restaurant(r)]
    if approve and not rids:
        # Approving nothing is a slip, not a refusal: the same page again, the request still waiting.
        return _consent_page(sb, areq_id, areq, NO_RESTAURANT)
    sb.store.delete("authorization_request", areq_id)
    return _finish_authorization(sb, areq, approve, rids)


# -- /v2/connection -----------------------------------------------------------------------------------
async def get_connection(request: web.Request) -> web.Response:
    sb: Sandbox = request.app["sb"]
    conn = authenticate(sb, request)
    restaurants = [{"id": r["id"], "name": r["name"], "city": r["city"]}
                   for r in (sb.restaurant(rid) for rid in conn.restaurant_ids) if r]
    out = {"client_id": conn.client_id, "kind": conn.kind, "restaurant_id": conn.restaurant_id,
           "restaurants": restaurants, "scopes": conn.scopes}
    if conn.device:
        out["device"] = device_info(conn.device)
    return json_response(out)


async def delete_connection(request: web.Request) -> web.Response:
    sb: Sandbox = request.app["sb"]
    conn = authenticate(sb, request)
    disconnect(sb, conn)
    return web.Response(status=204)


def routes(app: web.Application) -> None:
    r = app.router
    r.add_get("/.well-known/oauth-authorization-server", metadata)
    r.add_post("/oauth/device_authorization", device_authorization)
    r.add_get("/oauth/authorize", authorize)
    r.add_post("/oauth/token", token)
    r.add_post("/oauth/revoke", revoke)
    r.add_post("/_sandbox/consent", consent_decision)
    r.add_get("/v2/connection", get_connection)
    r.add_delete("/v2/connection", delete_connection)
