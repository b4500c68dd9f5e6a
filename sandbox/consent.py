"""A partner application's connection (authorization code + PKCE S256, RFC 7636; iss in the redirect, RFC 9207):
GET /oauth/authorize checks the request and shows the owner the consent page (or answers at once: prompt=none with
a consent given before, or the admin API's automatic consent), the page's form decides, the redirect carries a
single-use code, and the token endpoint exchanges it (authorization_code_grant) for a grant's tokens. The redirect's
iss is the public origin of the request that produced it (origin.py: behind a TLS proxy, the proxy's address)."""
from __future__ import annotations

import base64
import hashlib
import hmac
import html
import secrets
from urllib.parse import urlencode, urlsplit

from aiohttp import web

from . import contract
from .clients import CLIENTS, client_name
from .db import iso, now
from .errors import OAuthError
from .oauth import check_scopes, issue_tokens, issuer, token_json
from .state import SANDBOX, Sandbox, new_id, token_hash


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


def _finish_authorization(request: web.Request, areq: dict, approve: bool, restaurant_ids: list[str]) -> web.Response:
    """The authorization response. Its iss is the public origin of the request that produces it (origin.py): the
    authorize request when it answers at once, the consent form's post when the owner decides."""
    sb = request.app[SANDBOX]
    iss = issuer(request)
    params = {"state": areq["state"]} if areq.get("state") else {}
    if not approve or not restaurant_ids:
        return _redirect(areq["redirect_uri"], {"error": "access_denied", **params, "iss": iss})
    code = "ac_" + secrets.token_urlsafe(24)
    sb.store.put("auth_code", token_hash(code), {
        "client_id": areq["client_id"], "redirect_uri": areq["redirect_uri"], "code_challenge": areq["code_challenge"],
        "scopes": areq["scopes"], "restaurant_ids": restaurant_ids, "expires_at": now() + sb.config["auth_code_ttl"],
        "issuer": iss})
    sb.store.put("consent", areq["client_id"], {"scopes": areq["scopes"], "restaurant_ids": restaurant_ids})
    return _redirect(areq["redirect_uri"], {"code": code, **params, "iss": iss})


async def authorize(request: web.Request) -> web.Response:
    sb = request.app[SANDBOX]
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
    iss = {"iss": issuer(request)}
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
            return _finish_authorization(request, areq, True, consent["restaurant_ids"])
        return _redirect(ruri, {"error": "access_denied", "error_description": "consent required", **base, **iss})
    auto = sb.auto_consent
    if auto and auto.get("decision") in ("approve", "deny"):
        return _finish_authorization(request, areq, auto["decision"] == "approve",
                                     list(auto.get("restaurant_ids") or ["11"]))
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
    sb = request.app[SANDBOX]
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
    return _finish_authorization(request, areq, approve, rids)


def authorization_code_grant(sb: Sandbox, form: dict, cid: str, client: dict) -> web.Response:
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
                                     "scopes": rec["scopes"], "active": True, "created_at": iso(),
                                     "issuer": rec.get("issuer")})
    return token_json(sb, issue_tokens(sb, "partner", grant_id, cid, rec["scopes"]))


def routes(app: web.Application) -> None:
    app.router.add_get("/oauth/authorize", authorize)
    app.router.add_post("/_sandbox/consent", consent_decision)
