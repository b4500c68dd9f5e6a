"""The frame of every /v2 operation: @operation wraps a handler with the checks the contract names for it —
bearer token and scopes, empty query values, Accept, the restaurant in the path, the staff session, the body, the
Idempotency-Key — and hands it a Ctx."""
from __future__ import annotations

from dataclasses import dataclass
from functools import wraps
from typing import Any, Awaitable, Callable

from aiohttp import web

from . import contract
from .auth import Conn, authenticate, check_restaurant, staff_from_token
from .bodies import body_limit, parse_body
from .errors import ApiError, problem
from .idempotency import count_commit, run_keyed
from .state import SANDBOX, Sandbox


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


def operation(operation_id: str, body: str | None = None, staff: str | None = None, idempotent: bool = False,
              raw_body: tuple[str, int] | None = None):
    """Wrap a handler: auth + scope, restaurant, staff session (required/optional), body, Idempotency-Key."""
    needed = contract.op_scopes(operation_id)

    def deco(fn: Callable[[Ctx], Awaitable[web.Response]]):
        @wraps(fn)
        async def handler(request: web.Request) -> web.Response:
            sb = request.app[SANDBOX]
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

            async def run(ctx: Ctx) -> web.Response:
                return await _run(fn, ctx)

            key = request.headers.get("Idempotency-Key")
            if not idempotent:
                return await run(await make_ctx())
            if key is None:
                ctx = await make_ctx()
                return count_commit(sb, operation_id, None, await run(ctx))
            # The key comes before the body: a known key answers from its record whatever the bytes are
            limit = body_limit(sb, body, raw_body)
            return await run_keyed(sb, request, conn.id, key, operation_id, limit, make_ctx, run)

        handler.operation_id = operation_id
        return handler

    return deco


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


def owned(ctx: Ctx, kind: str, param: str) -> dict:
    """The object of this kind named by the path parameter, if it belongs to the path's restaurant; 404 otherwise."""
    obj = ctx.sb.store.get(kind, ctx.request.match_info[param])
    if not obj or obj["restaurant_id"] != ctx.rid:
        raise ApiError("not_found", f"No such {kind}.")
    return obj


async def _run(fn, ctx: Ctx) -> web.Response:
    try:
        return await fn(ctx)
    except ApiError as e:
        return problem(ctx.request, e.code, e.detail, status=e.status, headers=e.headers, **e.extra)
