"""Who calls a /v2 operation: the connection behind the bearer access token (a paired device or a partner's grant),
the restaurants it may reach, and the employee signed in on it (the staff session of Profirest-Staff-Token)."""
from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from .db import iso, now
from .errors import ApiError
from .state import Sandbox, token_hash

# What a signed-in employee may do, by role (a staff session's scopes)
STAFF_SCOPES = {
    "manager": ["attendance:punch", "orders:write", "tabs:write", "receipts:write", "kitchen:write", "deliveries:write",
                "customers:write", "offline:approve"],
    "waiter": ["attendance:punch", "orders:write", "tabs:write", "receipts:write"],
    "cashier": ["attendance:punch", "orders:write", "tabs:write", "receipts:write"],
    "cook": ["attendance:punch", "kitchen:write"],
    "courier": ["attendance:punch", "deliveries:write"],
}


# -- the connection behind an access token ------------------------------------------------------------
@dataclass
class Conn:
    id: str
    kind: str  # device | partner | admin
    client_id: str
    scopes: list[str]
    restaurant_ids: list[str]
    device: dict | None = None
    token_hash: str = ""

    @property
    def restaurant_id(self) -> str | None:
        return self.device["restaurant_id"] if self.device else None


def authenticate(sb: Sandbox, request: web.Request) -> Conn:
    header = request.headers.get("Authorization", "")
    if not header.lower().startswith("bearer "):
        raise ApiError("invalid_token", "Authorization: Bearer <access token> is missing.")
    token = header[7:].strip()
    th = token_hash(token)
    tok = sb.store.get("token", th)
    if not tok or tok["type"] != "access" or tok.get("revoked"):
        raise ApiError("invalid_token", "The access token is unknown or revoked.")
    if tok["expires_at"] <= now():
        raise ApiError("invalid_token", "The access token expired.")
    if tok["conn_kind"] == "device":
        dev = sb.store.get("device", tok["conn"])
        if not dev or not dev.get("active"):
            raise ApiError("invalid_token", "The device was unpaired.")
        dev["last_seen_at"] = iso()
        sb.store.put("device", dev["id"], dev, dev["restaurant_id"])
        return Conn(dev["id"], "device", dev["client_id"], tok["scopes"], [dev["restaurant_id"]], dev, th)
    grant = sb.store.get("grant", tok["conn"])
    if not grant or not grant.get("active"):
        raise ApiError("invalid_token", "The connection was revoked.")
    return Conn(grant["id"], "partner", grant["client_id"], tok["scopes"], list(grant["restaurant_ids"]), None, th)


def check_restaurant(sb: Sandbox, conn: Conn, rid: str) -> dict:
    r = sb.restaurant(rid)
    if not r:
        raise ApiError("not_found", f"No restaurant {rid}.")
    if rid not in conn.restaurant_ids:
        raise ApiError("restaurant_forbidden", f"This connection may not reach restaurant {rid}.")
    return r


# -- staff sessions -----------------------------------------------------------------------------------
def staff_from_token(sb: Sandbox, request: web.Request, conn: Conn, extend: bool = True) -> dict | None:
    """The staff session named by Profirest-Staff-Token; None without the header; 401 when it is dead."""
    token = request.headers.get("Profirest-Staff-Token")
    if token is None:
        return None
    sess = sb.store.get("staff_session", token_hash(token))
    t = now()
    if (not sess or sess.get("ended") or sess["conn"] != conn.id or t > sess["max_expires"]
            or t > sess["last_used"] + sess["idle"]):
        raise ApiError("staff_session_expired", "Sign the employee in again.")
    if extend:
        sess["last_used"] = t
        sb.store.put("staff_session", token_hash(token), sess, sess["restaurant_id"])
    sess["_token_hash"] = token_hash(token)
    return sess


def employee_ref(emp: dict) -> dict:
    return {"id": emp["id"], "name": emp["name"], "role": emp["role"]}
