"""Idempotency-Key: a keyed write runs once per (connection, key); a repeat with the same method, path and bytes
answers the stored response (Idempotent-Replayed: true), other bytes 422 idempotency_key_reused, a repeat while the
first still runs 409 idempotency_in_progress. Also the commit ledger's counting of writes that ran."""
from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from typing import Any, Awaitable, Callable

from aiohttp import web

from .bodies import read_body
from .db import now
from .errors import ApiError
from .state import Sandbox

IDEMPOTENT_REPLAY_HEADER = "Idempotent-Replayed"


def check_key(key: str) -> None:
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


def count_commit(sb: Sandbox, operation_id: str, slot: tuple[str, str] | None, resp: web.Response) -> web.Response:
    """A write whose handler ran and answered 2xx is a commit: the soak test counts them per key to see doubles."""
    if 200 <= resp.status < 300:
        sb.stats.commits_by_operation[operation_id] += 1
        if slot is None:
            sb.stats.unkeyed_commits += 1
        else:
            sb.stats.commits[slot] += 1
    return resp


async def run_keyed(sb: Sandbox, request: web.Request, conn_id: str, key: str, operation_id: str, limit: int,
                    make_ctx: Callable[[], Awaitable[Any]],
                    run: Callable[[Any], Awaitable[web.Response]]) -> web.Response:
    """Look the key up on the raw bytes first, then parse the body (make_ctx) and run the handler under the key."""
    check_key(key)
    fp = fingerprint(request, await read_body(sb, request, limit))
    slot = (conn_id, key)
    _note_first_body(sb, slot, fp)
    rec_id = f"{conn_id}:{key}"
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
        resp = await run(ctx)
        _remember(sb, rec_id, fp, resp)
        return count_commit(sb, operation_id, slot, resp)
    finally:
        sb.idem_running.pop(slot, None)
