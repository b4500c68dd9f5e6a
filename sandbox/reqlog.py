"""The request log of the console (GET /_sandbox/requests): the last requests of each connection, with their
outcome, and never a secret — tokens and PINs appear only as their last four characters or a short hash."""
from __future__ import annotations

import hashlib
import json
import time
from collections import Counter, OrderedDict, deque
from datetime import datetime, timezone
from typing import Any
from urllib.parse import parse_qsl, urlencode

PER_CONNECTION = 300  # requests kept per connection
MAX_CONNECTIONS = 200  # connections kept (the least recently active go first)
MAX_KEYS = 100_000  # Idempotency-Keys whose attempts are counted (a soak test sends many; then counting starts over)
NO_CONNECTION = "-"  # requests without a known access token (OAuth, discovery, unknown tokens)
REDACTED_HEADERS = {"authorization", "profirest-staff-token", "cookie", "set-cookie", "proxy-authorization"}
SECRET_PARAMS = {"code", "token", "access_token", "refresh_token", "client_secret", "pin", "password", "device_code"}


def short_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()[:10]


def tail(secret: str) -> str:
    """A secret's last four characters, the most the console ever shows of one."""
    return "…" + secret[-4:] if len(secret) > 8 else "…"


def redact_header(name: str, value: str) -> str:
    if name.lower() in REDACTED_HEADERS:
        scheme = value.split(" ", 1)[0] if " " in value else ""
        return f"{scheme} <redacted>" if scheme else "<redacted>"
    return value


def redact_query(query: str) -> str:
    if not query:
        return ""
    pairs = parse_qsl(query, keep_blank_values=True)
    return urlencode([(k, tail(v) if k.lower() in SECRET_PARAMS else v) for k, v in pairs], safe="/:*,")


def bearer(headers) -> str | None:
    header = headers.get("Authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else None


def iso_ms(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class RequestLog:
    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.seq = 0
        self.by_conn: OrderedDict[str, deque] = OrderedDict()
        self.attempts: Counter = Counter()  # (connection, Idempotency-Key) -> requests seen
        self.polls: dict[str, dict[str, Any]] = {}  # connection -> {"last_poll_at", "polls"}

    def __len__(self) -> int:
        return sum(len(d) for d in self.by_conn.values())

    def start(self, request, conn: dict | None) -> dict[str, Any]:
        """The entry of a request as it arrives (status None until finish); filed under its connection."""
        self.seq += 1
        t = time.time()
        conn_id = conn["id"] if conn else NO_CONNECTION
        key = request.headers.get("Idempotency-Key")
        entry: dict[str, Any] = {
            "seq": self.seq, "time": iso_ms(t), "method": request.method, "path": request.path,
            "query": redact_query(request.query_string),
            "headers": {k: redact_header(k, v) for k, v in request.headers.items()},
            "request_id": request.get("request_id"), "connection": conn_id,
            "kind": conn["kind"] if conn else None, "client_id": conn["client_id"] if conn else None,
            "token": None, "staff_session": None, "idempotency_key": key, "attempt": None,
            "status": None, "duration_ms": None, "replay": False, "problem": None, "fault": None, "_t": t}
        tok = bearer(request.headers)
        if tok:
            entry["token"] = tail(tok)
        staff = request.headers.get("Profirest-Staff-Token")
        if staff:
            entry["staff_session"] = "ss#" + short_hash(staff)
        if key is not None:
            if len(self.attempts) >= MAX_KEYS and (conn_id, key) not in self.attempts:
                self.attempts.clear()
            self.attempts[(conn_id, key)] += 1
            entry["attempt"] = self.attempts[(conn_id, key)]
        log = self.by_conn.get(conn_id)
        if log is None:
            log = self.by_conn[conn_id] = deque(maxlen=PER_CONNECTION)
            while len(self.by_conn) > MAX_CONNECTIONS:
                self.by_conn.popitem(last=False)
        else:
            self.by_conn.move_to_end(conn_id)
        log.append(entry)
        return entry

    def finish(self, entry: dict[str, Any], request, resp) -> None:
        entry["duration_ms"] = round((time.time() - entry.pop("_t", time.time())) * 1000, 1)
        if resp is None:
            return
        entry["status"] = resp.status
        entry["replay"] = resp.headers.get("Idempotent-Replayed") == "true"
        fault = request.get("sandbox_fault")
        if fault:
            entry["fault"] = {"id": fault["id"], "action": fault["action"]}
        if resp.status >= 400 and getattr(resp, "content_type", "") == "application/problem+json":
            try:
                entry["problem"] = json.loads(resp.body)["code"]
            except Exception:  # noqa: BLE001 — a streamed or odd body: no code to show
                pass
        if request.method == "GET" and request.path == "/v2/events" and entry["connection"] != NO_CONNECTION:
            p = self.polls.setdefault(entry["connection"], {"last_poll_at": None, "polls": 0})
            p["last_poll_at"] = entry["time"]
            p["polls"] += 1

    def rows(self, limit: int, connection: str | None = None) -> list[dict[str, Any]]:
        """The last limit entries (oldest first), of one connection or of all."""
        if connection is not None:
            source = list(self.by_conn.get(connection, ()))
        else:
            source = sorted((e for d in self.by_conn.values() for e in d), key=lambda e: e["seq"])
        return [{k: v for k, v in e.items() if not k.startswith("_")} for e in source[-limit:]]

    def last_request(self, connection: str) -> dict[str, Any] | None:
        log = self.by_conn.get(connection)
        return {k: v for k, v in log[-1].items() if not k.startswith("_")} if log else None

    def count(self, connection: str) -> int:
        return len(self.by_conn.get(connection, ()))
