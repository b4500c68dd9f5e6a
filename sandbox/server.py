"""The aiohttp application: routes of every module (an @operation handler's from the contract), middlewares
(request id, request log, faults, contract validation, problem errors) and running on a port with the first stdout
line as JSON."""
from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import signal
import sys
import traceback

from aiohttp import web

from . import (admin, attendance, backups, catalog, connection, consent, contract, customers, events, faults, oauth, orders,
               pairing, reqlog, restaurants, tabs, tokens, validation)
from .bodies import read_body
from .errors import ApiError, OAuthError, problem
from .state import SANDBOX, Sandbox, token_hash

log = logging.getLogger("sandbox")
access = logging.getLogger("sandbox.access")

PUBLIC_PREFIXES = ("/v2/", "/oauth/", "/.well-known/")
QUIET_GETS = ("/_sandbox/connections", "/_sandbox/events/recent", "/_sandbox/faults", "/_sandbox/stream")  # what the console polls


def connection_of(sb: Sandbox, request: web.Request) -> dict | None:
    """The connection (device or partner grant) behind the request's bearer token, live or not, for the log."""
    tok = reqlog.bearer(request.headers)
    rec = sb.store.get("token", token_hash(tok)) if tok else None
    if not rec:
        return None
    return {"id": rec["conn"], "kind": rec["conn_kind"], "client_id": rec["client_id"]}


def is_public(path: str) -> bool:
    return path.startswith(PUBLIC_PREFIXES) or path in ("/v2", "/oauth")


@web.middleware
async def outer(request: web.Request, handler):
    sb = request.app[SANDBOX]
    request["request_id"] = "req_" + secrets.token_hex(8)
    public = is_public(request.path)
    entry = sb.request_log.start(request, connection_of(sb, request)) if public else None
    resp = None
    try:
        resp = await handler(request)
    except faults.Dropped:
        resp = web.Response(status=499)
    finally:
        if not request.path.startswith(("/_sandbox/requests", "/_sandbox/stats", "/admin", "/_sandbox/pairings",
                                        "/_sandbox/devices", "/_sandbox/presence", "/_sandbox/restaurants",
                                        "/_sandbox/commits")) and not (
                request.method == "GET" and request.path.startswith(QUIET_GETS)):
            access.info("%s %s%s → %s", request.method, request.path,
                        "?" + reqlog.redact_query(request.query_string) if request.query_string else "",
                        resp.status if resp is not None else "error")
        if entry is not None:
            sb.request_log.finish(entry, request, resp)
        if public:
            route = request.match_info.route
            resource = getattr(route, "resource", None)
            template = resource.canonical if resource is not None else request.path
            sb.stats.requests[f"{request.method} {template}"] += 1
    return resp


@web.middleware
async def fault_injection(request: web.Request, handler):
    sb = request.app[SANDBOX]
    if sb.faults and is_public(request.path):
        f = faults.take(sb, request)
        if f:
            request["sandbox_fault"] = f
            return await faults.apply(sb, request, f, handler)
    return await handler(request)


@web.middleware
async def contract_validation(request: web.Request, handler):
    sb = request.app[SANDBOX]
    if not sb.validate or not is_public(request.path):
        return await handler(request)
    body = None
    if request.body_exists:
        try:
            body = await read_body(sb, request, sb.config["backup_body_limit"])
        except ApiError:
            body = None
    known, req_errors = validation.check_request(request, body)
    resp = await handler(request)
    if not known or not isinstance(resp, web.Response) or resp.prepared:
        return resp
    if req_errors and 200 <= resp.status < 300:
        return _violation(sb, request, f"accepted a request the contract rejects: {req_errors}")
    resp_errors = validation.check_response(request, body, resp)
    if resp_errors:
        return _violation(sb, request, f"the {resp.status} response breaks the contract: {resp_errors}")
    return resp


def _violation(sb: Sandbox, request: web.Request, text: str) -> web.Response:
    sb.stats.contract_violations += 1
    log.error("CONTRACT VIOLATION (sandbox bug) %s %s: %s", request.method, request.path, text)
    return problem(request, "internal_error", f"Sandbox contract violation: {text}"[:1500])


@web.middleware
async def errors(request: web.Request, handler):
    try:
        return await handler(request)
    except ApiError as e:
        return problem(request, e.code, e.detail, status=e.status, headers=e.headers, **e.extra)
    except OAuthError as e:
        return e.response()
    except web.HTTPMethodNotAllowed as e:
        return problem(request, "method_not_allowed", f"{request.method} is not allowed here.",
                       headers={"Allow": ", ".join(sorted(e.allowed_methods))})
    except web.HTTPNotFound:
        return problem(request, "not_found", f"No such path: {request.path}")
    except web.HTTPRequestEntityTooLarge:
        return problem(request, "payload_too_large")
    except web.HTTPException as e:
        if e.status < 400:
            raise
        return problem(request, "bad_request" if e.status < 500 else "internal_error", e.reason, status=e.status)
    except (faults.Dropped, asyncio.CancelledError, ConnectionError):
        raise
    except Exception:  # noqa: BLE001
        log.error("unhandled error on %s %s\n%s", request.method, request.path, traceback.format_exc())
        return problem(request, "internal_error", "The sandbox failed; see its log.")


async def _request_id_header(request: web.Request, response: web.StreamResponse) -> None:
    if "request_id" in request:
        response.headers["Profirest-Request-Id"] = request["request_id"]


def add_operations(app: web.Application, module) -> None:
    """Every @operation handler defined in `module`, at the method and path the contract gives its operationId: the
    contract is the one route table, so a handler cannot sit at a path the contract does not name."""
    for handler in vars(module).values():
        operation_id = getattr(handler, "operation_id", None)
        if operation_id and handler.__module__ == module.__name__:
            where = contract.operations()[operation_id]
            app.router.add_route(where["method"], where["path"], handler)


def make_app(sb: Sandbox) -> web.Application:
    app = web.Application(middlewares=[outer, fault_injection, contract_validation, errors],
                          client_max_size=sb.config["backup_body_limit"] + 1024 * 1024)
    app[SANDBOX] = sb
    app.on_response_prepare.append(_request_id_header)
    for module in (oauth, pairing, consent, tokens, connection, restaurants, attendance, catalog, orders, tabs, customers,
                   backups, events, admin):
        add_operations(app, module)
        if hasattr(module, "routes"):  # what the contract has no operationId for, or serves in its own way
            module.routes(app)
    app.on_shutdown.append(events.close_streams)
    return app


class Runner:
    """Owns the listener so /_sandbox/restart can close it and listen again on the same port."""

    def __init__(self, sb: Sandbox, host: str, port: int):
        self.sb, self.host, self.port = sb, host, port
        self.app = make_app(sb)
        self.runner = web.AppRunner(self.app, access_log=None, handle_signals=False, shutdown_timeout=1)
        self.site: web.TCPSite | None = None
        sb.restart_hook = self.restart

    async def start(self) -> None:
        await self.runner.setup()
        await self._listen()

    async def _listen(self) -> None:
        self.site = web.TCPSite(self.runner, self.host, self.port, reuse_address=True)
        await self.site.start()
        sock = self.site._server.sockets[0]  # noqa: SLF001
        self.port = sock.getsockname()[1]
        self.sb.base_url = f"http://{self.host if ':' not in self.host else '[' + self.host + ']'}:{self.port}"

    async def restart(self, down_seconds: float = 0.2) -> None:
        log.warning("restart: closing the listener and every connection, keeping state")
        await events.close_streams(self.app)
        if self.site is not None:
            await self.site.stop()
        server = self.runner.server
        if server is not None:
            for proto in list(server.connections):
                proto.force_close()
                if proto.transport is not None:
                    proto.transport.close()
        await asyncio.sleep(down_seconds)
        await self._listen()
        log.warning("restart: listening again on %s", self.sb.base_url)

    async def stop(self) -> None:
        await self.runner.cleanup()


def raise_open_file_limit() -> None:
    """As many open files as the hard limit allows (at most 65 536): a partner's benchmark holds a thousand streams
    at once, and a soft limit of 1 024 would refuse connections before that."""
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
        if soft != resource.RLIM_INFINITY and soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    except (ImportError, ValueError, OSError):
        pass


async def serve(sb: Sandbox, host: str, port: int, quiet: bool, banner, exit_on_stdin_eof: bool = False) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    # A parent may have started us with SIGTERM/SIGINT blocked or ignored: take them back, so terminate() works.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    if exit_on_stdin_eof:
        loop.add_reader(sys.stdin.fileno(), lambda: stop.set() if not os.read(sys.stdin.fileno(), 4096) else None)
    raise_open_file_limit()
    runner = Runner(sb, host, port)
    await runner.start()
    api = sb.base_url
    ready = {"sandbox": "ready", "api": api, "admin": api + "/admin", "pid": os.getpid()}
    if sb.config.get("public_url"):
        ready["public_url"] = sb.config["public_url"]  # what it advertises (origin.py); `api` is where it listens
    sys.stdout.write(json.dumps(ready) + "\n")
    sys.stdout.flush()
    if not quiet:
        sys.stdout.write(banner(api, api + "/admin") + "\n")
        sys.stdout.flush()
    try:
        await stop.wait()
    finally:
        await runner.stop()
