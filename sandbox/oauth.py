"""OAuth 2 machinery the flows share: the authorization server's metadata (RFC 8414), reading a token-endpoint
form, client authentication (public clients by client_id, the confidential one by client_secret_basic), scopes and
issuing access + rotating refresh tokens. The flows: pairing.py (device authorization, RFC 8628), consent.py
(authorization code + PKCE, RFC 7636 / RFC 9207), tokens.py (the token endpoint, revocation RFC 7009);
connection.py is what a token stands for. The issuer and every endpoint advertised are on the request's public origin
(origin.py: the proxy's address behind a TLS proxy, `--public-url` when set)."""
from __future__ import annotations

import base64
import hmac
import secrets
from urllib.parse import parse_qsl, unquote

from aiohttp import web

from . import contract
from .bodies import read_body
from .clients import CLIENTS
from .db import now
from .errors import ApiError, OAuthError, json_response
from .origin import public_origin
from .state import Sandbox, token_hash

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def issuer(request: web.Request) -> str:
    """The issuer this request sees: its public origin (origin.py), so behind a TLS proxy the proxy's address."""
    return public_origin(request)


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
        # access_expires_at: when the access token issued with it expires (stats: refresh_early).
        sb.store.put("token", token_hash(rt), {"type": "refresh", "conn": conn_id, "conn_kind": conn_kind,
                                               "client_id": client_id, "scopes": scopes, "issued_at": now(),
                                               "access_expires_at": now() + ttl, "access_ttl": ttl})
        out["refresh_token"] = rt
    return out


def token_json(sb: Sandbox, data: dict) -> web.Response:
    """A token answer, without the members the omit_members setting leaves out (scope, expires_in; a refresh without
    rotation carries no refresh_token already)."""
    omitted = sb.config["omit_members"]
    data = {k: v for k, v in data.items() if k not in omitted or k == "refresh_token"}
    return json_response(data, 200, {"Cache-Control": "no-store", "Pragma": "no-cache"})


async def metadata(request: web.Request) -> web.Response:
    base = issuer(request)
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


def routes(app: web.Application) -> None:
    app.router.add_get("/.well-known/oauth-authorization-server", metadata)
