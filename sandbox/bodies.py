"""Request bodies: read with a byte limit (413 beyond), checked for their media type, parsed as JSON and validated
against the operation's contract schema (422 with the fields that break it)."""
from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from . import contract
from .errors import ApiError
from .state import Sandbox


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
