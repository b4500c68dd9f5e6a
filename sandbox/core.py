"""The sandbox's shared state and the per-operation machinery: authentication, scopes, restaurants,
staff sessions, JSON bodies, idempotency and paging."""
from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import json
import logging
import secrets
from collections import Counter, deque
from dataclasses import dataclass, field
from functools import wraps
from typing import Any, Awaitable, Callable

from aiohttp import web

from . import contract
from .db import Store, iso, now
from .reqlog import RequestLog
from .errors import ApiError, json_response, problem

log = logging.getLogger("sandbox")

DEFAULT_CONFIG = {
    "access_token_ttl": 1800,
    "device_code_ttl": 600,
    "poll_interval": 5,
    "slow_down_increment": 5,  # RFC 8628: +5 s after slow_down; tests may shrink it
    "staff_idle": 300,
    "staff_max": 43200,
    "staff_lockout": 300,
    "staff_max_attempts": 5,
    "staff_attempt_window": 300,
    "quote_ttl": 900,
    "auth_code_ttl": 60,
    "refresh_grace": 60,  # a rotated refresh token replayed this soon answers the same new tokens (a lost answer)
    "idempotency_ttl": 86400,
    "heartbeat": 15,
    "event_retention": 7 * 24 * 3600,
    "stream_retry_after": 300,
    "sse_retry_ms": 2000,
    "json_body_limit": 1024 * 1024,
    "idempotency_hold_ms": 0,  # tests: keep a keyed request running this long (to see idempotency_in_progress)
    "backup_body_limit": 10 * 1024 * 1024,
}

STAFF_SCOPES = {
    "manager": ["attendance:punch", "orders:write", "tabs:write", "receipts:write", "kitchen:write", "deliveries:write",
                "customers:write", "offline:approve"],
    "waiter": ["attendance:punch", "orders:write", "tabs:write", "receipts:write"],
    "cashier": ["attendance:punch", "orders:write", "tabs:write", "receipts:write"],
    "cook": ["attendance:punch", "kitchen:write"],
    "courier": ["attendance:punch", "deliveries:write"],
}


def new_id(prefix: str, n: int = 6) -> str:
    alphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    return prefix + "".join(secrets.choice(alphabet) for _ in range(n))


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Stats:
    token_refreshes: Counter = field(default_factory=Counter)
    refresh_reuse: int = 0
    refresh_replays: int = 0
    requests: Counter = field(default_factory=Counter)
    idempotent_replays: int = 0
    punches_recorded: int = 0
    device_polls: int = 0
    slow_downs: int = 0
    faults_triggered: int = 0
    sse_connections: int = 0
    contract_violations: int = 0
    body_mismatch_under_key: int = 0
    # the commit ledger (GET /_sandbox/commits): 2xx answers of idempotent operations whose handler ran
    commits: Counter = field(default_factory=Counter)  # (connection id, Idempotency-Key) -> commits
    unkeyed_commits: int = 0
    commits_by_operation: Counter = field(default_factory=Counter)
    punch_requests: Counter = field(default_factory=Counter)  # punch id -> requests (or batch items) that reached it
    conn_refreshes: Counter = field(default_factory=Counter)  # connection id -> refresh grants (the console shows it)

    def as_json(self) -> dict[str, Any]:
        return {"token_refreshes": dict(self.token_refreshes), "refresh_reuse": self.refresh_reuse,
                "refresh_replays": self.refresh_replays,
                "requests": dict(self.requests), "idempotent_replays": self.idempotent_replays,
                "punches_recorded": self.punches_recorded, "device_polls": self.device_polls,
                "slow_downs": self.slow_downs, "faults_triggered": self.faults_triggered,
                "sse_connections": self.sse_connections, "contract_violations": self.contract_violations,
                "body_mismatch_under_key": self.body_mismatch_under_key, "commits": self.commit_summary()}

    def commit_summary(self) -> dict[str, Any]:
        """Counts only: the soak test compares them with what it sent; duplicated_* > 0 means a doubled write."""
        return {"keys": len(self.commits), "commits": sum(self.commits.values()),
                "duplicated_keys": sum(1 for n in self.commits.values() if n > 1),
                "unkeyed": self.unkeyed_commits, "by_operation": dict(self.commits_by_operation),
                "punches": {"ids": len(self.punch_requests), "requests": sum(self.punch_requests.values()),
                            "duplicated_ids": sum(1 for n in self.punch_requests.values() if n > 1)}}

    def commit_ledger(self) -> dict[str, Any]:
        """The summary plus every key's and every punch id's count."""
        by_key: dict[str, dict[str, int]] = {}
        for (conn_id, key), n in self.commits.items():
            by_key.setdefault(conn_id, {})[key] = n
        return {**self.commit_summary(), "by_key": by_key, "punch_requests": dict(self.punch_requests)}

    def clear_commits(self) -> None:
        self.commits.clear()
        self.unkeyed_commits = 0
        self.commits_by_operation.clear()
        self.punch_requests.clear()


class Sandbox:
    """Everything one running sandbox knows."""

    def __init__(self, db_path: str = ":memory:", config: dict[str, Any] | None = None, validate: bool = False):
        self.store = Store(db_path)
        self.config = {**DEFAULT_CONFIG, **(config or {})}
        self.validate = validate
        self.stats = Stats()
        self.request_log = RequestLog()
        self.idem_running: dict[tuple[str, str], str] = {}  # (connection, key) -> fingerprint of the running request
        self.idem_first_body: dict[tuple[str, str], tuple[str, float]] = {}  # -> (first fingerprint seen, when)
        self.faults: list[dict[str, Any]] = []
        self.stream_down = False
        self.stream_retry_after = self.config["stream_retry_after"]
        self.streams: set[web.StreamResponse] = set()
        self._event_cond: asyncio.Condition | None = None
        self.auto_consent: dict[str, Any] | None = None
        self.base_url = "http://127.0.0.1"
        self.restart_hook: Callable[[], Awaitable[None]] | None = None
        from . import seed
        if not self.store.meta("seeded"):
            seed.seed(self)

    # -- small helpers -------------------------------------------------------------------------------
    def restaurant(self, rid: str) -> dict | None:
        return self.store.get("restaurant", rid)

    def employee(self, eid: str) -> dict | None:
        return self.store.get("employee", eid)

    def reset(self) -> None:
        from . import seed
        epoch = self.store.meta("cursor_epoch", 1)
        self.store.wipe()
        self.store.set_meta("cursor_epoch", epoch + 1)
        self.idem_running.clear()
        self.idem_first_body.clear()
        seed.seed(self)

    def event_condition(self) -> asyncio.Condition:
        if self._event_cond is None:
            self._event_cond = asyncio.Condition()
        return self._event_cond

    async def notify_events(self) -> None:
        cond = self.event_condition()
        async with cond:
            cond.notify_all()

    def emit(self, type: str, restaurant_id: str, data: dict[str, Any]) -> str:
        """Appends an event to the feed and wakes the open streams; its id."""
        return self.emit_many(type, restaurant_id, [data])[0]

    def emit_many(self, type: str, restaurant_id: str, datas: list[dict[str, Any]]) -> list[str]:
        """Appends one event per data, in order, and wakes the open streams once (not once per event); their ids."""
        occurred_at = iso()
        ids = []
        for data in datas:
            ids.append(new_id("evt_", 10))
            self.store.append_event(ids[-1], type, restaurant_id, occurred_at, data)
        try:
            asyncio.get_running_loop().create_task(self.notify_events())
        except RuntimeError:
            pass
        return ids


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


# -- request bodies -----------------------------------------------------------------------------------
def media_type(request: web.Request) -> str:
    return request.headers.get("Content-Type", "").split(";")[0].strip().lower()


async def read_body(sb: Sandbox, request: web.Request, limit: int) -> bytes:
    """The body, at most limit bytes (413 beyond); cached in request["raw_body"] for the contract validator."""
    if request.get("raw_body_too_large"):
        raise ApiError("payload_too_large", "The body is too large.")
    cached = request.get("raw_body")
    if cached is not None:
        if len(cached) > limit:
            raise ApiError("payload_too_large", f"The body is {len(cached)} bytes; the limit is {limit}.")
        return cached
    cl = request.content_length
    if cl is not None and cl > limit:
        raise ApiError("payload_too_large", f"The body is {cl} bytes; the limit is {limit}.")
    data = bytearray()
    async for chunk in request.content.iter_chunked(65536):
        data += chunk
        if len(data) > limit:
            request["raw_body_too_large"] = True
            raise ApiError("payload_too_large", f"The body is larger than {limit} bytes.")
    request["raw_body"] = bytes(data)
    return bytes(data)


async def json_body(sb: Sandbox, request: web.Request, schema: str, types=("application/json",)) -> tuple[Any, bytes]:
    mt = media_type(request)
    if mt not in types:
        raise ApiError("unsupported_media_type", f"Send {' or '.join(types)}, not {mt or 'no Content-Type'}.")
    raw = await read_body(sb, request, sb.config["json_body_limit"])
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ApiError("invalid_json", f"The body is not valid JSON: {e}.")
    errors = contract.field_errors(schema, body)
    if errors:
        raise ApiError("validation_failed", "Some fields break the contract.", errors=errors)
    return body, raw


# -- operations ---------------------------------------------------------------------------------------
@dataclass
class Ctx:
    sb: Sandbox
    request: web.Request
    conn: Conn
    restaurant: dict | None
    staff: dict | None
    body: Any
    raw: bytes

    @property
    def rid(self) -> str:
        return self.restaurant["id"] if self.restaurant else ""

    @property
    def staff_employee(self) -> dict | None:
        return self.sb.employee(self.staff["employee_id"]) if self.staff else None


IDEMPOTENT_REPLAY_HEADER = "Idempotent-Replayed"


def operation(operation_id: str, body: str | None = None, staff: str | None = None, idempotent: bool = False,
              raw_body: tuple[str, int] | None = None):
    """Wrap a handler: auth + scope, restaurant, staff session (required/optional), body, Idempotency-Key."""
    needed = contract.op_scopes(operation_id)

    def deco(fn: Callable[[Ctx], Awaitable[web.Response]]):
        @wraps(fn)
        async def handler(request: web.Request) -> web.Response:
            sb: Sandbox = request.app["sb"]
            conn = authenticate(sb, request)
            missing = [s for s in needed if s not in conn.scopes]
            if missing:
                raise ApiError("insufficient_scope", f"The token lacks the scope {' '.join(missing)}.")
            empty_query_check(request, operation_id)
            accept_check(request, operation_id)
            rest = None
            if "restaurant_id" in request.match_info:
                rest = check_restaurant(sb, conn, request.match_info["restaurant_id"])
            sess = None
            if staff == "required" and "Profirest-Staff-Token" not in request.headers:
                raise ApiError("staff_session_missing", "Send Profirest-Staff-Token of a signed-in employee.")
            if staff in ("required", "optional"):
                sess = staff_from_token(sb, request, conn)
                if sess and rest and sess["restaurant_id"] != rest["id"]:
                    raise ApiError("staff_session_expired", "The employee signed in at another restaurant.")
            else:
                try:  # a register sends the token along with everything: it extends the session
                    staff_from_token(sb, request, conn)
                except ApiError:
                    pass

            async def make_ctx() -> Ctx:
                parsed, raw = await parse_body(sb, request, body, raw_body)
                return Ctx(sb, request, conn, rest, sess, parsed, raw)

            key = request.headers.get("Idempotency-Key")
            if not idempotent:
                return await _run(fn, await make_ctx())
            if key is None:
                ctx = await make_ctx()
                return _count_commit(sb, operation_id, None, await _run(fn, ctx))
            # The key comes before the body: a known key answers from its record whatever the bytes are
            limit = body_limit(sb, body, raw_body)
            return await _idempotent(sb, request, conn, key, operation_id, limit, make_ctx, fn)

        handler.operation_id = operation_id
        return handler

    return deco


def body_limit(sb: Sandbox, body: str | None, raw_body: tuple[str, int | str] | None) -> int:
    """How many bytes an operation's body may have (413 beyond)."""
    if raw_body:
        return sb.config[raw_body[1]] if isinstance(raw_body[1], str) else raw_body[1]
    return sb.config["json_body_limit"]


async def parse_body(sb: Sandbox, request: web.Request, body: str | None,
                     raw_body: tuple[str, int | str] | None) -> tuple[Any, bytes]:
    """(parsed JSON or None, raw bytes) after the media type, JSON and contract checks of the operation."""
    if body:
        types = ("application/json", "application/merge-patch+json") if body == "CustomerUpdate" else ("application/json",)
        return await json_body(sb, request, body, types)
    if raw_body:
        mt = media_type(request)
        if mt != raw_body[0]:
            raise ApiError("unsupported_media_type", f"Send {raw_body[0]}, not {mt or 'no Content-Type'}.")
        return None, await read_body(sb, request, body_limit(sb, body, raw_body))
    return None, b""


def _media_matches(pattern: str, produced: str) -> bool:
    if pattern in ("*/*", produced):
        return True
    major, _, minor = pattern.partition("/")
    return minor == "*" and produced.startswith(major + "/")


def accept_check(request: web.Request, operation_id: str) -> None:
    """406 not_acceptable when Accept names no type the operation produces (problem+json always may be sent)."""
    header = request.headers.get("Accept")
    if not header:
        return
    wanted = []
    for part in header.split(","):
        bits = [b.strip() for b in part.split(";")]
        q = next((b[2:] for b in bits[1:] if b.startswith("q=")), "1")
        try:
            if float(q) <= 0:
                continue
        except ValueError:
            pass
        if bits[0]:
            wanted.append(bits[0].lower())
    produced = contract.produced_types(operation_id)
    if not produced or any(_media_matches(w, p) for w in wanted for p in produced):
        return
    raise ApiError("not_acceptable", f"This operation answers {', '.join(produced)}.")


def empty_query_check(request: web.Request, operation_id: str) -> None:
    """The contract's query parameters never allow an empty value (OpenAPI allowEmptyValue is false)."""
    for name in contract.query_params(operation_id):
        if name in request.query and any(v == "" for v in request.query.getall(name)):
            raise ApiError("validation_failed", f"{name} must not be empty.",
                           errors=[{"pointer": f"?{name}", "code": "too_short", "message": f"{name} must not be empty"}])


async def _run(fn, ctx: Ctx) -> web.Response:
    try:
        return await fn(ctx)
    except ApiError as e:
        return problem(ctx.request, e.code, e.detail, status=e.status, headers=e.headers, **e.extra)


def _check_key(key: str) -> None:
    if not 1 <= len(key) <= 255:
        raise ApiError("validation_failed", "Idempotency-Key is 1–255 characters.",
                       errors=[{"pointer": "Idempotency-Key", "code": "too_long" if key else "too_short",
                                "message": "1–255 characters"}])


def fingerprint(request: web.Request, raw: bytes) -> str:
    """What an Idempotency-Key is tied to: method, path and the body's bytes (not its parsed meaning)."""
    return hashlib.sha256(request.method.encode() + b" " + request.path.encode() + b"\n" + raw).hexdigest()


def _note_first_body(sb: Sandbox, slot: tuple[str, str], fp: str) -> None:
    """Count a body that differs from the first one seen under this key, whether or not that one committed:
    the committed records alone miss a first attempt that failed or is still running."""
    first = sb.idem_first_body.get(slot)
    if first is None or first[1] + sb.config["idempotency_ttl"] < now():
        sb.idem_first_body[slot] = (fp, now())
    elif first[0] != fp:
        sb.stats.body_mismatch_under_key += 1


def _live_record(sb: Sandbox, rec_id: str) -> dict | None:
    rec = sb.store.get("idempotency", rec_id)
    if rec and rec["created"] + sb.config["idempotency_ttl"] < now():
        sb.store.delete("idempotency", rec_id)
        return None
    return rec


def _replay(sb: Sandbox, rec: dict, fp: str) -> web.Response:
    if rec["fingerprint"] != fp:
        raise ApiError("idempotency_key_reused", "This Idempotency-Key was used with another method, path or body.")
    sb.stats.idempotent_replays += 1
    headers = dict(rec["headers"])
    headers[IDEMPOTENT_REPLAY_HEADER] = "true"
    return web.Response(status=rec["status"], body=base64.b64decode(rec["body"]), headers=headers)


def _check_running(sb: Sandbox, slot: tuple[str, str], fp: str) -> None:
    """The key is tied to the running request's bytes: other bytes will never be accepted under it (422, not
    retryable), the same bytes may get the stored answer shortly (409 idempotency_in_progress, retryable)."""
    running = sb.idem_running.get(slot)
    if running is None:
        return
    if running != fp:
        raise ApiError("idempotency_key_reused", "This Idempotency-Key is in use with another method, path or body.")
    raise ApiError("idempotency_in_progress", "The first request with this key is still running.",
                   headers={"Retry-After": "1"})


def _problem_code(resp: web.Response) -> str | None:
    if resp.content_type != "application/problem+json":
        return None
    try:
        return json.loads(resp.body)["code"]
    except Exception:  # noqa: BLE001
        return None


def _remember(sb: Sandbox, rec_id: str, fp: str, resp: web.Response) -> None:
    """Keep the answer for replays, except the ones a retry may change: 5xx, 401, 429, in_progress."""
    if resp.status >= 500 or resp.status in (401, 429) or _problem_code(resp) == "idempotency_in_progress":
        return
    keep = {k: v for k, v in resp.headers.items() if k.lower() in ("content-type", "location", "etag")}
    sb.store.put("idempotency", rec_id, {"fingerprint": fp, "status": resp.status, "headers": keep,
                                         "body": base64.b64encode(resp.body or b"").decode(), "created": now()})


def _count_commit(sb: Sandbox, operation_id: str, slot: tuple[str, str] | None, resp: web.Response) -> web.Response:
    """A write whose handler ran and answered 2xx is a commit: the soak test counts them per key to see doubles."""
    if 200 <= resp.status < 300:
        sb.stats.commits_by_operation[operation_id] += 1
        if slot is None:
            sb.stats.unkeyed_commits += 1
        else:
            sb.stats.commits[slot] += 1
    return resp


async def _idempotent(sb: Sandbox, request: web.Request, conn: Conn, key: str, operation_id: str, limit: int,
                      make_ctx: Callable[[], Awaitable[Ctx]], fn) -> web.Response:
    """Look the key up on the raw bytes first, then parse the body and run the handler under the key."""
    _check_key(key)
    fp = fingerprint(request, await read_body(sb, request, limit))
    slot = (conn.id, key)
    _note_first_body(sb, slot, fp)
    rec_id = f"{conn.id}:{key}"
    rec = _live_record(sb, rec_id)
    if rec:
        return _replay(sb, rec, fp)
    _check_running(sb, slot, fp)
    sb.idem_running[slot] = fp
    try:
        # a body the contract rejects raises here and is not recorded: the key stays free for a fixed body
        ctx = await make_ctx()
        if sb.config["idempotency_hold_ms"]:
            await asyncio.sleep(sb.config["idempotency_hold_ms"] / 1000)
        resp = await _run(fn, ctx)
        _remember(sb, rec_id, fp, resp)
        return _count_commit(sb, operation_id, slot, resp)
    finally:
        sb.idem_running.pop(slot, None)


# -- paging -------------------------------------------------------------------------------------------
def _limit(request: web.Request) -> int:
    raw = request.query.get("limit")
    if raw is None:
        return 50
    try:
        n = int(raw)
    except ValueError:
        n = -1
    if not 1 <= n <= 100:
        raise ApiError("validation_failed", "limit is 1–100.",
                       errors=[{"pointer": "?limit", "code": ("wrong_type" if not raw.lstrip("-").isdigit()
                                                                else "too_large" if n > 100 else "too_small"),
                                "message": "limit is an integer from 1 to 100"}])
    return n


def page(request: web.Request, items: list[Any], list_name: str) -> web.Response:
    limit = _limit(request)
    offset = 0
    cursor = request.query.get("cursor")
    if cursor is not None:
        try:
            if not cursor.startswith("pc_"):
                raise ValueError
            doc = json.loads(base64.urlsafe_b64decode(cursor[3:] + "=" * (-len(cursor[3:]) % 4)))
            if doc.get("k") != list_name or not isinstance(doc.get("o"), int) or doc["o"] < 0:
                raise ValueError
            offset = doc["o"]
        except (ValueError, binascii.Error, UnicodeDecodeError, AttributeError, TypeError):
            raise ApiError("cursor_invalid", "Send back only a cursor the server gave.")
    chunk = items[offset:offset + limit]
    nxt = None
    if offset + limit < len(items):
        nxt = "pc_" + base64.urlsafe_b64encode(json.dumps({"k": list_name, "o": offset + limit}).encode()).decode().rstrip("=")
    page: dict = {"data": chunk}
    if nxt is not None:  # the last page has no next_cursor at all
        page["next_cursor"] = nxt
    return json_response(page)


def comma_list(request: web.Request, name: str, allowed: list[str] | None = None) -> list[str] | None:
    values = request.query.getall(name, [])
    if not values:
        return None
    out = [v.strip() for raw in values for v in raw.split(",") if v.strip()]
    if allowed is not None:
        bad = [v for v in out if v not in allowed]
        if bad:
            raise ApiError("validation_failed", f"Unknown {name}: {', '.join(bad)}.",
                           errors=[{"pointer": f"?{name}", "code": "enum", "message": f"one of {', '.join(allowed)}"}])
    return out


def schema_enum(name: str) -> list[str]:
    return list(contract.spec()["components"]["schemas"][name]["enum"])
