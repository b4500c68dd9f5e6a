"""Fault injection, driven only from the admin API (/_sandbox/faults); applied to the public paths."""
from __future__ import annotations

import asyncio
import fnmatch
import logging
import random
from typing import Any

from aiohttp import web

from .errors import code_for_status, problem
from .state import Sandbox, new_id

log = logging.getLogger("sandbox.faults")

ACTIONS = ("status", "drop_before", "drop_after", "delay", "close_after_response", "redirect", "truncate", "garbage")


class FaultError(ValueError):
    pass


# what a random fault may pick by name alone: the actions that need no extra field
PLAIN_ACTIONS = ("drop_before", "drop_after", "close_after_response", "truncate", "garbage")


def _check_action(spec: dict[str, Any]) -> None:
    """The fields one action needs (a fault, or an entry of a random fault's mix)."""
    action = spec.get("action")
    if action not in ACTIONS:
        raise FaultError(f"action is one of {', '.join(ACTIONS + ('random',))}")
    if action == "status" and not isinstance(spec.get("status"), int):
        raise FaultError("status needs an integer status")
    if action == "delay" and not isinstance(spec.get("delay_ms"), (int, float)):
        raise FaultError("delay needs delay_ms")
    if action == "redirect" and not isinstance(spec.get("location"), str):
        raise FaultError("redirect needs location")


def _action_fields(spec: dict[str, Any]) -> dict[str, Any]:
    out = {"action": spec["action"]}
    for k in ("status", "retry_after", "problem", "delay_ms", "location", "body", "content_type"):
        if k in spec:
            out[k] = spec[k]
    return out


def _parse_status_pick(entry: str) -> dict[str, Any]:
    """"status:503" (Retry-After: 1 on 429; on 503 with or without it, by chance), "status:503:2", "status:503:none"."""
    parts = entry.split(":")
    if len(parts) not in (2, 3) or not parts[1].isdigit() or not 100 <= int(parts[1]) <= 599:
        raise FaultError(f"mix entry {entry!r}: write status:<code> or status:<code>:<retry_after seconds|none>")
    status = int(parts[1])
    if len(parts) == 3:
        if parts[2] != "none" and not parts[2].isdigit():
            raise FaultError(f"mix entry {entry!r}: the retry after is seconds or none")
        return {"action": "status", "status": status, "retry_after": None if parts[2] == "none" else parts[2]}
    if status == 429:
        return {"action": "status", "status": 429, "retry_after": "1"}
    if status == 503:
        return {"action": "status", "status": 503, "retry_after": "maybe"}
    return {"action": "status", "status": status}


def _parse_pick(entry: Any) -> tuple[str, dict[str, Any]]:
    """(label for the listing, the action's fields) of one mix entry: a plain action's name, a status string or
    a whole fault spec (its action, not random)."""
    if isinstance(entry, str):
        if entry in PLAIN_ACTIONS:
            return entry, {"action": entry}
        if entry.startswith("status:"):
            return entry, _parse_status_pick(entry)
        raise FaultError(f"mix entry {entry!r}: one of {', '.join(PLAIN_ACTIONS)}, status:<code>[:<retry_after>] "
                         "or an object like a fault")
    if isinstance(entry, dict):
        _check_action(entry)
        label = entry["action"] + (f":{entry['status']}" if entry["action"] == "status" else "")
        return label, _action_fields(entry)
    raise FaultError("mix entries are strings or objects")


def _random_fields(spec: dict[str, Any]) -> dict[str, Any]:
    rate = spec.get("rate")
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate <= 1:
        raise FaultError("random needs rate, a number in (0, 1]")
    mix = spec.get("mix")
    if not isinstance(mix, list) or not mix:
        raise FaultError("random needs mix, a non-empty list")
    seed = spec.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise FaultError("seed is an integer or null")
    picks = [_parse_pick(e) for e in mix]
    # the generator and parsed picks stay private (listing() leaves out keys starting with _)
    return {"action": "random", "rate": rate, "mix": mix, "seed": seed, "picked": {},
            "_picks": picks, "_rng": random.Random(seed)}


def add_fault(sb: Sandbox, spec: dict[str, Any]) -> dict[str, Any]:
    path = spec.get("path") or "*"
    if not isinstance(path, str):
        raise FaultError("path is a glob string")
    count = spec.get("count", 1)
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise FaultError("count is a positive integer or null (forever)")
    if spec.get("action") == "random":
        fields = _random_fields(spec)
    else:
        _check_action(spec)
        fields = _action_fields(spec)
    restaurant = spec.get("restaurant_id")
    if restaurant is not None and not isinstance(restaurant, str):
        raise FaultError("restaurant_id is a string: only requests whose query names this restaurant")
    fault = {"id": new_id("flt_", 8), "method": (spec.get("method") or None), "path": path, "count": count,
             "remaining": count, "triggered": 0, **fields}
    if restaurant is not None:
        fault["restaurant_id"] = restaurant
    if fault["method"]:
        fault["method"] = fault["method"].upper()
    sb.faults.append(fault)
    return public(fault)


def _matches(f: dict, request: web.Request) -> bool:
    if f["remaining"] is not None and f["remaining"] <= 0:
        return False
    if f["method"] and f["method"] != request.method:
        return False
    if "restaurant_id" in f and request.query.get("restaurant_id") != f["restaurant_id"]:
        return False  # one restaurant's feed among many (its requests name it in the query)
    return fnmatch.fnmatchcase(request.path, f["path"])


def _roll(f: dict) -> dict | None:
    """A random fault's action for this request, or None when the roll misses (then it costs no count)."""
    rng: random.Random = f["_rng"]
    if rng.random() >= f["rate"]:
        return None
    label, fields = rng.choice(f["_picks"])
    f["picked"][label] = f["picked"].get(label, 0) + 1
    chosen = {"id": f["id"], **fields}
    if chosen.get("retry_after") == "maybe":  # a 503 comes with and without Retry-After, as proxies send it
        chosen["retry_after"] = "1" if rng.random() < 0.5 else None
    return chosen


def take(sb: Sandbox, request: web.Request) -> dict | None:
    for f in sb.faults:
        if not _matches(f, request):
            continue
        chosen = _roll(f) if f["action"] == "random" else f
        if chosen is None:
            continue
        if f["remaining"] is not None:
            f["remaining"] -= 1
        f["triggered"] += 1
        sb.stats.faults_triggered += 1
        log.info("fault %s (%s) on %s %s", f["id"], chosen["action"], request.method, request.path)
        return chosen
    return None


def _abort(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()


def status_response(request: web.Request, f: dict) -> web.Response:
    status = int(f["status"])
    headers = {}
    if f.get("retry_after") is not None:
        headers["Retry-After"] = str(f["retry_after"])
    if f.get("problem", True) is False:
        if "body" in f:
            return web.Response(status=status, body=str(f["body"]).encode(), headers={
                **headers, "Content-Type": f.get("content_type", "text/html")})
        if status == 502:
            return web.Response(status=status, body=b"<html><body><h1>502 Bad Gateway</h1></body></html>",
                                headers={**headers, "Content-Type": "text/html"})
        return web.Response(status=status, body=b"", headers=headers)
    return problem(request, code_for_status(status), "Injected by the sandbox.", status=status, headers=headers)


class Dropped(Exception):
    """The connection was dropped on purpose: nothing more is written."""


async def apply(sb: Sandbox, request: web.Request, f: dict, handler) -> web.StreamResponse:
    action = f["action"]
    if action == "status":
        return status_response(request, f)
    if action == "drop_before":
        _abort(request)
        raise Dropped()
    if action == "delay":
        await asyncio.sleep(float(f["delay_ms"]) / 1000)
        return await handler(request)
    if action == "redirect":
        return web.Response(status=307, headers={"Location": f["location"]})
    if action == "garbage":
        return web.Response(status=200, body=b"<html>this is not JSON", headers={"Content-Type": "application/json"})
    resp = await handler(request)
    if action == "drop_after":
        _abort(request)
        raise Dropped()
    if action == "truncate":
        body = resp.body if isinstance(getattr(resp, "body", None), bytes) else b""
        declared = len(body) + 100 if len(body) < 2 else len(body)
        sent = body[: len(body) // 2]
        head = f"HTTP/1.1 {resp.status} {resp.reason}\r\n"
        hdrs = {k: v for k, v in resp.headers.items() if k.lower() not in ("content-length", "transfer-encoding")}
        hdrs.setdefault("Content-Type", resp.content_type or "application/json")
        hdrs["Profirest-Request-Id"] = request.get("request_id", "")
        raw = head + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()) + f"Content-Length: {declared}\r\n\r\n"
        if request.transport is not None:
            request.transport.write(raw.encode("latin-1") + sent)
            request.transport.close()
        raise Dropped()
    if action == "close_after_response":
        # answer normally (keep-alive as usual), then close the connection ~2 ms later
        await resp.prepare(request)
        await resp.write_eof()
        transport = request.transport
        if transport is not None:
            asyncio.get_running_loop().call_later(0.002, transport.close)
        return resp
    return resp


def public(f: dict) -> dict:
    """The fault as the admin API shows it; `active` is false once its count is used up (it matches nothing more)."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in f.items() if not k.startswith("_")}
    out["active"] = f["remaining"] is None or f["remaining"] > 0
    return out


def listing(sb: Sandbox) -> list[dict]:
    return [public(f) for f in sb.faults]
