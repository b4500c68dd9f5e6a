"""The event generator (POST /_sandbox/events/generator): events at a steady rate for each of many restaurants — a
partner's thousand restaurants each changing once a second — for benchmarks of clients that follow many feeds.

Event number m goes to restaurant m mod n and is due at start + m / (n × rate): the restaurants take turns, spread
evenly over each period, rather than all at once. Every tick (10 ms) the events that fell due are appended in one
commit and only the streams of their restaurants are woken. Each event's `occurred_at` is the moment it was written,
to the millisecond, so a client measures its latency from it. A loop that falls behind (a busy machine) writes the
overdue events at once, late, and counts how late in `max_lag_ms`: the rate holds on average, and nothing is skipped."""
from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from .db import iso, iso_ms
from .state import Sandbox

TICK_SECONDS = 0.01


class EventGenerator:
    def __init__(self, sb: Sandbox, restaurant_ids: list[str], rate: float, type_: str,
                 data: Callable[[Sandbox, str], dict]):
        self.sb = sb
        self.restaurant_ids = restaurant_ids
        self.rate = rate
        self.type = type_
        # Each restaurant's data as it stands when the generator starts (catalog.updated: its sold-out products).
        self.data = {rid: data(sb, rid) for rid in restaurant_ids}
        self.emitted = 0
        self.max_lag_ms = 0.0
        self.started_at = iso()
        self.task: asyncio.Task | None = None

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self.run())

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.task = None

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        n = len(self.restaurant_ids)
        spacing = 1.0 / (n * self.rate)  # seconds between two events, over all restaurants
        while True:
            now = loop.time()
            due = int((now - start) / spacing) + 1
            if due > self.emitted:
                self.max_lag_ms = max(self.max_lag_ms, (now - (start + self.emitted * spacing)) * 1000)
                batch = []
                for m in range(self.emitted, due):
                    rid = self.restaurant_ids[m % n]
                    batch.append((self.type, rid, dict(self.data[rid])))
                self.sb.emit_batch(batch, occurred_at=iso_ms(time.time()))
                self.emitted = due
            # Until the next event is due, but at least a tick: at a thousand events a second they go ten at a time.
            await asyncio.sleep(max(TICK_SECONDS, start + self.emitted * spacing - loop.time()))

    def status(self) -> dict[str, Any]:
        return {"running": self.task is not None, "rate": self.rate, "type": self.type,
                "restaurants": len(self.restaurant_ids), "emitted": self.emitted, "started_at": self.started_at,
                "max_lag_ms": round(self.max_lag_ms, 1)}


def stopped_status() -> dict[str, Any]:
    return {"running": False, "rate": 0, "type": None, "restaurants": 0, "emitted": 0, "started_at": None,
            "max_lag_ms": 0}
