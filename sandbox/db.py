"""State in SQLite: a generic object table (JSON per object), the event log and backup bytes.

A file keeps pairings across restarts; ":memory:" is for tests. All access happens on the event loop thread.
"""
from __future__ import annotations

import json
import sqlite3
import time
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
  kind TEXT NOT NULL, id TEXT NOT NULL, restaurant_id TEXT, seq INTEGER NOT NULL,
  data TEXT NOT NULL, PRIMARY KEY (kind, id));
CREATE INDEX IF NOT EXISTS objects_kind_seq ON objects (kind, restaurant_id, seq);
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, type TEXT NOT NULL, restaurant_id TEXT NOT NULL,
  occurred_at TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_restaurant_seq ON events (restaurant_id, seq);
CREATE TABLE IF NOT EXISTS blobs (id TEXT PRIMARY KEY, content BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class Store:
    def __init__(self, path: str = ":memory:"):
        self.path = path
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        if path != ":memory:":
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(SCHEMA)
        self._seq = self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM objects").fetchone()[0]

    # -- objects ---------------------------------------------------------------------------------
    def get(self, kind: str, id: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT data FROM objects WHERE kind=? AND id=?", (kind, id)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, kind: str, id: str, data: dict[str, Any], restaurant_id: str | None = None) -> dict[str, Any]:
        """Insert or replace; an existing object keeps its position (seq)."""
        text = json.dumps(data, ensure_ascii=False)
        cur = self.conn.execute("UPDATE objects SET data=?, restaurant_id=COALESCE(?, restaurant_id) WHERE kind=? AND id=?",
                                (text, restaurant_id, kind, id))
        if cur.rowcount == 0:
            self._seq += 1
            self.conn.execute("INSERT INTO objects (kind, id, restaurant_id, seq, data) VALUES (?,?,?,?,?)",
                              (kind, id, restaurant_id, self._seq, text))
        return data

    def insert_new(self, kind: str, id: str, data: dict[str, Any], restaurant_id: str | None = None) -> bool:
        """Insert only when absent; False when an object with this id exists (exactly-once writes)."""
        self._seq += 1
        try:
            self.conn.execute("INSERT INTO objects (kind, id, restaurant_id, seq, data) VALUES (?,?,?,?,?)",
                              (kind, id, restaurant_id, self._seq, json.dumps(data, ensure_ascii=False)))
            return True
        except sqlite3.IntegrityError:
            return False

    def delete(self, kind: str, id: str) -> None:
        self.conn.execute("DELETE FROM objects WHERE kind=? AND id=?", (kind, id))

    def list(self, kind: str, restaurant_id: str | None = None, newest_first: bool = False) -> list[dict[str, Any]]:
        order = "DESC" if newest_first else "ASC"
        if restaurant_id is None:
            rows = self.conn.execute(f"SELECT data FROM objects WHERE kind=? ORDER BY seq {order}", (kind,))
        else:
            rows = self.conn.execute(f"SELECT data FROM objects WHERE kind=? AND restaurant_id=? ORDER BY seq {order}",
                                     (kind, restaurant_id))
        return [json.loads(r[0]) for r in rows]

    def count(self, kind: str) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM objects WHERE kind=?", (kind,)).fetchone()[0]

    def delete_kind(self, kind: str, where: Iterable[str] | None = None) -> None:
        self.conn.execute("DELETE FROM objects WHERE kind=?", (kind,))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Many writes as one commit (bulk creation: one fsync instead of one per row); all or nothing. Inside another
        transaction it is part of that one."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # -- meta ------------------------------------------------------------------------------------
    def meta(self, key: str, default: Any = None) -> Any:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def set_meta(self, key: str, value: Any) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, json.dumps(value)))

    # -- events ----------------------------------------------------------------------------------
    def append_event(self, id: str, type: str, restaurant_id: str, occurred_at: str, data: dict) -> int:
        cur = self.conn.execute("INSERT INTO events (id, type, restaurant_id, occurred_at, data) VALUES (?,?,?,?,?)",
                                (id, type, restaurant_id, occurred_at, json.dumps(data, ensure_ascii=False)))
        return cur.lastrowid

    def last_event_seq(self) -> int:
        return self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0]

    def events_after(self, seq: int, until: int, restaurant_ids: Iterable[str] | None = None) -> list[tuple[int, dict]]:
        """The events after `seq` up to `until`, oldest first; with `restaurant_ids`, only theirs (read through the
        index on restaurant and position, so a stream of one restaurant among a thousand reads only its own)."""
        if restaurant_ids is None:
            rows = self.conn.execute("SELECT seq, id, type, restaurant_id, occurred_at, data FROM events "
                                     "WHERE seq > ? AND seq <= ? ORDER BY seq", (seq, until))
        else:
            rids = list(restaurant_ids)
            marks = ",".join("?" * len(rids))
            rows = self.conn.execute("SELECT seq, id, type, restaurant_id, occurred_at, data FROM events "
                                     f"WHERE restaurant_id IN ({marks}) AND seq > ? AND seq <= ? ORDER BY seq",
                                     (*rids, seq, until))
        return [(r[0], {"id": r[1], "type": r[2], "restaurant_id": r[3], "occurred_at": r[4], "data": json.loads(r[5])})
                for r in rows]

    def recent_events(self, limit: int) -> list[dict]:
        """The newest events first, without their data: what the console's Events tab lists."""
        rows = self.conn.execute("SELECT seq, id, type, restaurant_id, occurred_at FROM events ORDER BY seq DESC LIMIT ?",
                                 (limit,))
        return [{"seq": r[0], "id": r[1], "type": r[2], "restaurant_id": r[3], "occurred_at": r[4]} for r in rows]

    # -- blobs -----------------------------------------------------------------------------------
    def put_blob(self, id: str, content: bytes) -> None:
        self.conn.execute("INSERT OR REPLACE INTO blobs (id, content) VALUES (?, ?)", (id, content))

    def get_blob(self, id: str) -> bytes | None:
        row = self.conn.execute("SELECT content FROM blobs WHERE id=?", (id,)).fetchone()
        return bytes(row[0]) if row else None

    def wipe(self) -> None:
        self.conn.executescript("DELETE FROM objects; DELETE FROM events; DELETE FROM blobs; DELETE FROM meta;"
                                "DELETE FROM sqlite_sequence WHERE name='events';")
        self._seq = 0

    def close(self) -> None:
        self.conn.close()


def now() -> float:
    return time.time()


def iso(ts: float | None = None) -> str:
    t = time.gmtime(now() if ts is None else ts)
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", t)


def iso_ms(ts: float) -> str:
    """RFC 3339 with milliseconds, for events whose moment a client measures latency by (the event generator)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts * 1000) % 1000:03d}Z"
