"""One running sandbox's state: the store, the settings, the counters and request log, what the admin API switches
(faults, the stream service, automatic consent), idempotency bookkeeping and the event feed's wake-ups.

A Sandbox starts empty: whoever opens one seeds it (seed.open_sandbox); nothing here knows the demo data."""
from __future__ import annotations

import asyncio
import hashlib
import secrets
from typing import Any, Awaitable, Callable

from aiohttp import web

from .db import Store, iso
from .reqlog import RequestLog
from .stats import Stats

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
    # A rotated refresh token replayed this soon answers the same new tokens (a lost answer); 0: strict rotation, a
    # second use is always invalid_grant (python -m sandbox --strict-rotation).
    "refresh_grace": 60,
    "idempotency_ttl": 86400,
    "heartbeat": 15,
    # What the stream's Profirest-Heartbeat header says; None: the heartbeat itself. The soak compresses the client's
    # time, so it announces the heartbeat in the client's seconds.
    "heartbeat_announced": None,
    "event_retention": 7 * 24 * 3600,
    "stream_retry_after": 300,
    "sse_retry_ms": 2000,
    "json_body_limit": 1024 * 1024,
    "idempotency_hold_ms": 0,  # tests: keep a keyed request running this long (to see idempotency_in_progress)
    "backup_body_limit": 10 * 1024 * 1024,
    # The origin every advertised URL is built on, whatever the request's headers (origin.py); None: per request.
    "public_url": None,
    # Members of OAuth answers left out, as RFC 6749 5.1 and RFC 8628 3.2 allow (OMITTABLE_MEMBERS): tests use it to
    # see a client read a server that sends only what is required. refresh_token is left out of refresh answers only,
    # and the refresh token then does not rotate (the old one stays valid, as a client that keeps it expects).
    "omit_members": [],
}

# What omit_members may name: the optional members of a token answer and of a device authorization answer.
OMITTABLE_MEMBERS = ("scope", "expires_in", "refresh_token", "verification_uri_complete", "interval")


def new_id(prefix: str, n: int = 6) -> str:
    alphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    return prefix + "".join(secrets.choice(alphabet) for _ in range(n))


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


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
        # Open streams waiting for events, by restaurant they read: an event wakes only the streams that can see it.
        self._stream_waiters: dict[str, set[asyncio.Event]] = {}
        self.generator: Any = None  # the event generator (generator.py) while it runs
        self.auto_consent: dict[str, Any] | None = None
        self.base_url = "http://127.0.0.1"
        self.restart_hook: Callable[[], Awaitable[None]] | None = None

    # -- small helpers -------------------------------------------------------------------------------
    def restaurant(self, rid: str) -> dict | None:
        return self.store.get("restaurant", rid)

    def employee(self, eid: str) -> dict | None:
        return self.store.get("employee", eid)

    def wipe(self) -> None:
        """Forgets every object, event and idempotency record; cursors issued so far expire (seed.reset seeds again)."""
        epoch = self.store.meta("cursor_epoch", 1)
        self.store.wipe()
        self.store.set_meta("cursor_epoch", epoch + 1)
        self.idem_running.clear()
        self.idem_first_body.clear()

    def watch_events(self, wake: asyncio.Event, restaurant_ids: set[str]) -> None:
        """`wake` is set whenever an event of one of `restaurant_ids` is appended (or every stream must look)."""
        for rid in restaurant_ids:
            self._stream_waiters.setdefault(rid, set()).add(wake)

    def unwatch_events(self, wake: asyncio.Event, restaurant_ids: set[str]) -> None:
        for rid in restaurant_ids:
            waiters = self._stream_waiters.get(rid)
            if waiters is not None:
                waiters.discard(wake)
                if not waiters:
                    del self._stream_waiters[rid]

    async def notify_events(self, restaurant_ids: set[str] | None = None) -> None:
        """Wakes the streams that read one of `restaurant_ids` (None: every stream, e.g. to end them)."""
        if restaurant_ids is None:
            groups = list(self._stream_waiters.values())
        else:
            groups = [self._stream_waiters[rid] for rid in restaurant_ids if rid in self._stream_waiters]
        for waiters in groups:
            for wake in waiters:
                wake.set()

    def emit(self, type: str, restaurant_id: str, data: dict[str, Any]) -> str:
        """Appends an event to the feed and wakes the open streams; its id."""
        return self.emit_many(type, restaurant_id, [data])[0]

    def emit_many(self, type: str, restaurant_id: str, datas: list[dict[str, Any]]) -> list[str]:
        """Appends one event per data, in order, and wakes the open streams once (not once per event); their ids."""
        return self.emit_batch([(type, restaurant_id, data) for data in datas])

    def emit_batch(self, events: list[tuple[str, str, dict[str, Any]]], occurred_at: str | None = None) -> list[str]:
        """Appends (type, restaurant, data) events in order, in one commit, and wakes the streams of their
        restaurants once; their ids."""
        occurred_at = occurred_at or iso()
        ids = []
        with self.store.transaction():
            for type, restaurant_id, data in events:
                ids.append(new_id("evt_", 10))
                self.store.append_event(ids[-1], type, restaurant_id, occurred_at, data)
        try:
            asyncio.get_running_loop().create_task(self.notify_events({rid for _, rid, _ in events}))
        except RuntimeError:
            pass
        return ids


# The application key the Sandbox is stored under: typed, so handlers read it as a Sandbox (aiohttp AppKey).
SANDBOX = web.AppKey("sandbox", Sandbox)
