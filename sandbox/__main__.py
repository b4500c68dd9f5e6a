"""python -m sandbox [serve …] | approve CODE | deny CODE | devices | unpair DEVICE_ID | pairings | fault JSON | reset"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import logging.handlers
import os
import queue
import sys
import urllib.error
import urllib.request
from pathlib import Path

# The one state file of `make sandbox`, `make demo` and `python -m sandbox` (PROFIREST_SANDBOX_DB sets another).
DEFAULT_DB = os.environ.get("PROFIREST_SANDBOX_DB") or str(Path(__file__).resolve().parent / "state.sqlite3")
DEFAULT_URL = os.environ.get("PROFIREST_SANDBOX_URL", "http://127.0.0.1:8080")


def _remove_state(db: str) -> list[str]:
    """Deletes a state file with its SQLite companions (-wal, -shm, -journal); returns what it deleted."""
    removed = []
    for path in (db, db + "-wal", db + "-shm", db + "-journal"):
        try:
            os.remove(path)
            removed.append(path)
        except FileNotFoundError:
            pass
    return removed


class _DroppingQueueHandler(logging.handlers.QueueHandler):
    """Never blocks the event loop: when nobody drains stderr (a test harness holding the pipe), lines are dropped."""

    def enqueue(self, record):
        try:
            self.queue.put_nowait(record)
        except queue.Full:
            pass


def _public_url(value: str) -> str:
    from .origin import normalize_public_url  # imports aiohttp, which the admin commands start without

    try:
        return normalize_public_url(value)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _log_to_stderr(level: int) -> None:
    q: queue.Queue = queue.Queue(maxsize=10000)
    out = logging.StreamHandler(sys.stderr)
    out.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    listener = logging.handlers.QueueListener(q, out)
    listener.start()
    root = logging.getLogger()
    root.handlers[:] = [_DroppingQueueHandler(q)]
    root.setLevel(level)


def _serve(args) -> int:
    # Only serving needs the server's imports (aiohttp, openapi-core): the admin commands below start without them.
    from . import seed
    from .server import serve

    _log_to_stderr(logging.WARNING if args.quiet else logging.INFO)
    if args.fresh and args.db != ":memory:":
        removed = _remove_state(args.db)
        print(f"--fresh: deleted {', '.join(removed)}" if removed else f"--fresh: no state at {args.db}",
              file=sys.stderr)
    config = {"access_token_ttl": args.access_token_ttl, "device_code_ttl": args.device_code_ttl,
              "refresh_grace": 0 if args.strict_rotation else args.refresh_grace,
              "poll_interval": args.poll_interval, "staff_idle": args.staff_idle, "staff_max": args.staff_max,
              "heartbeat": args.heartbeat, "public_url": args.public_url}

    async def main():
        sb = seed.open_sandbox(args.db, config, validate=args.validate)
        await serve(sb, args.host, args.port, args.quiet, seed.demo_text, exit_on_stdin_eof=args.exit_on_stdin_eof)

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    return 0


def _call(url: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url.rstrip("/") + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read() or b"{}")
        except ValueError:
            return e.code, {"error": e.reason}
    except urllib.error.URLError as e:
        print(f"cannot reach the sandbox at {url}: {e.reason} (start it with `make sandbox`)", file=sys.stderr)
        sys.exit(2)


def _admin(args) -> int:
    url = args.url
    if args.cmd in ("approve", "deny"):
        body = {"restaurant_id": args.restaurant} if args.cmd == "approve" else {}
        status, out = _call(url, "POST", f"/_sandbox/pairings/{args.code}/{args.cmd}", body)
    elif args.cmd == "devices":
        status, out = _call(url, "GET", "/_sandbox/devices")
        if status == 200:
            for d in out["data"]:
                print(f"{d['id']}  {d['client_id']:<20} restaurant {d['restaurant_id']}  {d['name']}  "
                      f"last seen {d['last_seen_at'] or '-'}")
            return 0
    elif args.cmd == "pairings":
        status, out = _call(url, "GET", "/_sandbox/pairings")
        if status == 200:
            for p in out["data"]:
                print(f"{p['user_code']}  {p['client_id']:<20} {p['device_name']}  expires in {p['expires_in']} s")
            return 0
    elif args.cmd == "unpair":
        status, out = _call(url, "DELETE", f"/_sandbox/devices/{args.device_id}")
    elif args.cmd == "fault":
        status, out = _call(url, "POST", "/_sandbox/faults", json.loads(args.spec))
    elif args.cmd == "reset":
        status, out = _call(url, "POST", "/_sandbox/reset", {})
    else:
        return 2
    print(json.dumps(out, ensure_ascii=False))
    return 0 if status < 300 else 1


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m sandbox", description="The local Profirest API v2 sandbox.")
    sub = p.add_subparsers(dest="cmd")
    s = sub.add_parser("serve", help="run the server (the default)")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8080, help="0 = an ephemeral port")
    s.add_argument("--db", default=DEFAULT_DB, help="SQLite file, or :memory: (default %(default)s)")
    s.add_argument("--fresh", action="store_true",
                   help="delete the state file first: start from the seed data, every pairing forgotten")
    s.add_argument("--validate", action="store_true", help="validate every request and response against the contract")
    s.add_argument("--access-token-ttl", type=float, default=1800,
                   help="seconds an access token lasts (a few make tokens expire every few seconds)")
    s.add_argument("--refresh-grace", type=float, default=60,
                   help="seconds in which a rotated refresh token used again answers the same new tokens (a client "
                        "that lost the answer); 0 = strict rotation")
    s.add_argument("--strict-rotation", action="store_true",
                   help="no grace: a rotated refresh token used a second time is invalid_grant, as a strict server "
                        "answers (same as --refresh-grace 0; POST /_sandbox/config {\"refresh_grace\": 0} switches "
                        "it at run time)")
    s.add_argument("--device-code-ttl", type=float, default=600)
    s.add_argument("--poll-interval", type=float, default=5)
    s.add_argument("--staff-idle", type=float, default=300)
    s.add_argument("--staff-max", type=float, default=43200)
    s.add_argument("--heartbeat", type=float, default=15, help="seconds between SSE keep-alive comments")
    s.add_argument("--public-url", type=_public_url, default=None, metavar="https://HOST:PORT",
                   help="the origin to advertise (issuer, endpoints, iss, verification_uri) for every request, "
                        "e.g. a TLS proxy's; wins over Forwarded / X-Forwarded-* (trusted from loopback peers only)")
    s.add_argument("--quiet", action="store_true")
    s.add_argument("--exit-on-stdin-eof", action="store_true",
                   help="stop when standard input closes: a test run that dies (even by SIGKILL) leaves no sandbox behind")
    for name in ("approve", "deny"):
        a = sub.add_parser(name, help=f"{name} a pairing code")
        a.add_argument("code")
        if name == "approve":
            a.add_argument("--restaurant", default="11")
    sub.add_parser("devices", help="list paired devices")
    sub.add_parser("pairings", help="list pending pairing codes")
    u = sub.add_parser("unpair", help="unpair a device")
    u.add_argument("device_id")
    f = sub.add_parser("fault", help='inject a fault, e.g. \'{"path": "/v2/*", "action": "status", "status": 503}\'')
    f.add_argument("spec")
    sub.add_parser("reset", help="back to the seed data")
    for sp in sub.choices.values():
        if sp is not s:
            sp.add_argument("--url", default=DEFAULT_URL, help="the running sandbox (default %(default)s)")
    if not argv or argv[0].startswith("-"):
        argv = ["serve", *argv]
    args = p.parse_args(argv)
    return _serve(args) if args.cmd == "serve" else _admin(args)


if __name__ == "__main__":
    sys.exit(main())
