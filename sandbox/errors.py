"""problem+json answers built from the contract's x-error-catalog (titles in cs or en by Accept-Language)."""
from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from .contract import catalog

PROBLEM_BASE = "https://api.mujprofirest.cz/problems/"


def language(request: web.Request) -> str:
    """cs (default) or en, from Accept-Language with q-values."""
    header = request.headers.get("Accept-Language", "")
    best, best_q = "cs", -1.0
    for i, part in enumerate(header.split(",")):
        bits = part.strip().split(";")
        tag = bits[0].strip().lower()
        q = 1.0
        for b in bits[1:]:
            b = b.strip()
            if b.startswith("q="):
                try:
                    q = float(b[2:])
                except ValueError:
                    q = 0.0
        primary = tag.split("-")[0]
        if primary in ("cs", "en") and q > best_q:
            best, best_q = primary, q
    return best


class ApiError(Exception):
    """Raised anywhere in a handler; the error middleware turns it into problem+json."""

    def __init__(self, code: str, detail: str | None = None, *, status: int | None = None,
                 headers: dict[str, str] | None = None, **extra: Any):
        super().__init__(code)
        self.code = code
        self.detail = detail
        self.status = status
        self.headers = headers or {}
        self.extra = extra


def problem_body(request: web.Request, code: str, detail: str | None = None, status: int | None = None,
                 **extra: Any) -> tuple[int, dict[str, Any]]:
    entry = catalog().get(code) or catalog()["internal_error"]
    status = status or entry["status"]
    body: dict[str, Any] = {
        "type": PROBLEM_BASE + code,
        "title": entry["title"][language(request)],
        "status": status,
        "code": code,
        "request_id": request.get("request_id", ""),
        "instance": request.path,
    }
    if detail:
        body["detail"] = detail
    for k, v in extra.items():
        if v is not None:
            body[k] = v
    return status, body


def problem(request: web.Request, code: str, detail: str | None = None, *, status: int | None = None,
            headers: dict[str, str] | None = None, **extra: Any) -> web.Response:
    headers = dict(headers or {})
    ra = headers.get("Retry-After")
    if ra is not None and ra.isdigit() and "retry_after" not in extra:
        extra["retry_after"] = int(ra)
    status, body = problem_body(request, code, detail, status, **extra)
    if status == 401 and code == "invalid_token":
        headers.setdefault("WWW-Authenticate", 'Bearer error="invalid_token"')
    return web.Response(status=status, body=json.dumps(body, ensure_ascii=False).encode(),
                        content_type="application/problem+json", headers=headers)


def code_for_status(status: int) -> str:
    preferred = {400: "bad_request", 401: "invalid_token", 403: "insufficient_scope", 404: "not_found",
                 405: "method_not_allowed", 409: "status_conflict", 413: "payload_too_large", 415: "unsupported_media_type",
                 422: "validation_failed", 429: "rate_limited", 500: "internal_error", 502: "bad_gateway",
                 503: "service_unavailable", 504: "gateway_timeout"}
    if status in preferred:
        return preferred[status]
    for code, e in catalog().items():
        if e["status"] == status and not e["library_only"]:
            return code
    return "internal_error" if status >= 500 else "bad_request"


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(status=status, body=json.dumps(data, ensure_ascii=False).encode(),
                        content_type="application/json", headers=headers)


class OAuthError(Exception):
    def __init__(self, error: str, description: str | None = None, status: int = 400, headers: dict | None = None):
        super().__init__(error)
        self.error, self.description, self.status, self.headers = error, description, status, headers or {}

    def response(self) -> web.Response:
        body = {"error": self.error}
        if self.description:
            body["error_description"] = self.description
        h = {"Cache-Control": "no-store", **self.headers}
        return json_response(body, self.status, h)
