"""List answers: pages of at most ?limit items with an opaque next_cursor, and the comma-separated filters of a
list's query (?status=a,b) checked against the contract's enums."""
from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from aiohttp import web

from . import contract
from .errors import ApiError, json_response


def page_limit(request: web.Request) -> int:
    """?limit: 1–100, 50 without it."""
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
    limit = page_limit(request)
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
