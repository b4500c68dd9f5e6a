"""Fault injection, driven only from the admin API (/_sandbox/faults); applied to the public paths."""
from __future__ import annotations

import asyncio
import fnmatch
import logging
from typing import Any

from aiohttp import web

from .core import Sandbox, new_id
from .errors import code_for_status, problem

log = logging.getLogger("sandbox.faults")

ACTIONS = ("status", "drop_before", "drop_after", "delay", "close_after_response", "redirect", "truncate", "garbage")


class FaultError(ValueError):
    pass


def add_fault(sb: Sandbox, spec: dict[str, Any]) -> dict[str, Any]:
    action = spec.get("action")
    if action not in ACTIONS:
        raise FaultError(f"action is one of {', '.join(ACTIONS)}")
    path = spec.get("path") or "*"
    if not isinstance(path, str):
        raise FaultError("path is a glob string")
    count = spec.get("count", 1)
    if count is not None and (not isinstance(count, int) or count < 1):
        raise FaultError("count is a positive integer or null (forever)")
    if action == "status" and not isinstance(spec.get("status"), int):
        raise FaultError("status needs an integer status")
    if action == "delay" and not isinstance(spec.get("delay_ms"), (int, float)):
        raise FaultError("delay needs delay_ms")
    if action == "redirect" and not isinstance(spec.get("location"), str):
        raise FaultError("redirect needs location")
    fault = {"id": new_id("flt_", 8), "method": (spec.get("method") or None), "path": path, "count": count,
             "remaining": count, "action": action, "triggered": 0}
    for k in ("status", "retry_after", "problem", "delay_ms", "location", "body", "content_type"):
        if k in spec:
            fault[k] = spec[k]
    if fault["method"]:
        fault["method"] = fault["method"].upper()
    sb.faults.append(fault)
    return fault


def take(sb: Sandbox, request: web.Request) -> dict | None:
    for f in sb.faults:
        if f["remaining"] is not None and f["remaining"] <= 0:
            continue
        if f["method"] and f["method"] != request.method:
            continue
        if not fnmatch.fnmatchcase(request.path, f["path"]):
            continue
        if f["remaining"] is not None:
            f["remaining"] -= 1
        f["triggered"] += 1
        sb.stats.faults_triggered += 1
        log.info("fault %s (%s) on %s %s", f["id"], f["action"], request.method, request.path)
        return f
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


def listing(sb: Sandbox) -> list[dict]:
    return [dict(f) for f in sb.faults]
