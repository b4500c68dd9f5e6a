#!/usr/bin/env python3
"""The loopback server of `make bench`'s event-stream and paging figures (benchmarks/ProfirestBench/EventStream.swift
and Paging.swift). Not the sandbox: it serves only what those figures read, as fast as asyncio can, so that what is
measured is the client. Each response is written in one go with TCP_NODELAY. Prints {"port": N} on its first stdout
line and exits when its stdin closes.

Every event carries the time it was written to the socket, `data.sent_ns` (CLOCK_MONOTONIC nanoseconds, the clock
`time.monotonic_ns()` and the bench's `clock_gettime(CLOCK_MONOTONIC)` share on Linux), so the bench can tell how
long an event took from the server to `onEvents`.

Routes:
  POST /_bench/stream   what the next GET /v2/events/stream sends, a JSON object:
                          {"rate": R, "count": N}  N events paced at R a second (events due together go in one write)
                          {"rate": 0, "count": N}  N events as fast as the socket takes them (flow-controlled)
                          {"down": true}           503 stream_unavailable with Retry-After: 3600 (the feed polls)
                        the stream stays open, silent, after its last event
  POST /_bench/log      starts appending events to the polled log: {"rate": R, "count": N}
  GET  /_bench/stats    {"streams": connections served, "written": events written, "polls": GET /v2/events served}
  GET  /v2/events       the polled log after `cursor` (at most `limit`), has_more when more wait; without a cursor
                        the end of the log
  GET  /v2/events/stream
  GET  /v2/items        a list of ITEMS items in pages of `limit` (100), `cursor` = the index of the page's first item
"""
import asyncio
import json
import socket
import sys
import time
from urllib.parse import parse_qs, urlsplit

ITEMS = 100_000
OCCURRED = "2026-11-30T15:31:34.250Z"


def item(i):
    return {"id": f"itm_{i:06d}", "name": f"Položka číslo {i}", "price_cents": 1000 + i % 997,
            "category": "drinks" if i % 3 else "food", "active": i % 7 != 0}


PAGES = {}  # (cursor, limit) -> body, built on first use


def page(cursor, limit):
    key = (cursor, limit)
    if key not in PAGES:
        end = min(cursor + limit, ITEMS)
        PAGES[key] = json.dumps({"data": [item(i) for i in range(cursor, end)],
                                 "next_cursor": str(end) if end < ITEMS else None}, ensure_ascii=False).encode()
    return PAGES[key]


def event_json(n, sent_ns):
    return (f'{{"id":"evt_{n:09d}","type":"order.created","restaurant_id":"11","occurred_at":"{OCCURRED}",'
            f'"data":{{"order_id":"ord_{n}","status":"open","sent_ns":{sent_ns}}}}}')


def sse_frame(n, sent_ns):
    return f"id: {n}\nevent: order.created\ndata: {event_json(n, sent_ns)}\n\n"


def response(status, reason, body=b"", headers=()):
    head = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(body)}"] + [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def json_response(value, status=200, reason="OK", headers=()):
    return response(status, reason, json.dumps(value).encode(), [("Content-Type", "application/json"), *headers])


STATE = {"stream": {"rate": 10, "count": 0}, "streams": 0, "written": 0, "polls": 0}
LOG = []  # (n, sent_ns) of the polled log
LOG_TASK = None


async def append_log(rate, count):
    start = time.monotonic()
    first = len(LOG)
    while len(LOG) - first < count:
        due = min(count, int((time.monotonic() - start) * rate) + 1)
        now = time.monotonic_ns()
        while len(LOG) - first < due:
            LOG.append((len(LOG) + 1, now))
        await asyncio.sleep(max(0.0, start + (len(LOG) - first) / rate - time.monotonic()))


class Handler(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""
        self.can_write = asyncio.Event()
        self.can_write.set()
        self.streaming = None

    def pause_writing(self):
        self.can_write.clear()

    def resume_writing(self):
        self.can_write.set()

    def connection_lost(self, exc):
        self.can_write.set()
        if self.streaming:
            self.streaming.cancel()

    def data_received(self, data):
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].decode("latin-1").split("\r\n")
            headers = {}
            for line in head[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0"))
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4:end + 4 + length]
            self.buffer = self.buffer[end + 4 + length:]
            method, target, _ = head[0].split(" ", 2)
            self.answer(method, target, headers, body)

    def answer(self, method, target, headers, body):
        global LOG_TASK
        url = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        t = self.transport
        if url.path == "/_bench/stream":
            STATE["stream"] = json.loads(body or b"{}")
            t.write(json_response({"ok": True}))
        elif url.path == "/_bench/log":
            config = json.loads(body or b"{}")
            if LOG_TASK:
                LOG_TASK.cancel()
            LOG_TASK = asyncio.ensure_future(append_log(config["rate"], config["count"]))
            t.write(json_response({"ok": True}))
        elif url.path == "/_bench/stats":
            t.write(json_response({k: STATE[k] for k in ("streams", "written", "polls")}))
        elif url.path == "/v2/events":
            STATE["polls"] += 1
            limit = int(query.get("limit", "100"))
            if "cursor" not in query:
                t.write(json_response({"data": [], "next_cursor": str(len(LOG)), "has_more": False}))
                return
            after = int(query["cursor"])
            chosen = LOG[after:after + limit]
            data = "[" + ",".join(event_json(n, sent) for n, sent in chosen) + "]"
            nxt = str(after + len(chosen))
            body = f'{{"data":{data},"next_cursor":"{nxt}","has_more":{"true" if after + limit < len(LOG) else "false"}}}'
            t.write(response(200, "OK", body.encode(), [("Content-Type", "application/json")]))
        elif url.path == "/v2/events/stream":
            config = STATE["stream"]
            if config.get("down"):
                t.write(json_response({"type": "about:blank", "title": "stream unavailable", "status": 503,
                                       "code": "stream_unavailable"}, 503, "Service Unavailable",
                                      [("Retry-After", "3600")]))
                return
            STATE["streams"] += 1
            start = int(headers.get("last-event-id", "0") or "0")
            t.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n")
            self.streaming = asyncio.ensure_future(self.stream(start, config.get("rate", 0), config.get("count", 0)))
        elif url.path == "/v2/items":
            cursor = int(query.get("cursor", "0"))
            t.write(response(200, "OK", page(cursor, int(query.get("limit", "100"))),
                             [("Content-Type", "application/json")]))
        else:
            t.write(response(404, "Not Found"))

    def chunk(self, text):
        data = text.encode()
        self.transport.write(b"%x\r\n" % len(data) + data + b"\r\n")

    async def stream(self, start, rate, count):
        n = start
        last = start + count
        began = time.monotonic()
        while n < last and not self.transport.is_closing():
            if rate > 0:
                # Paced: every event that is due now, in one write, stamped with this moment.
                due = min(last, start + int((time.monotonic() - began) * rate) + 1)
                now = time.monotonic_ns()
                self.chunk("".join(sse_frame(i, now) for i in range(n + 1, due + 1)))
                STATE["written"] += due - n
                n = due
                await asyncio.sleep(max(0.0, began + (n - start) / rate - time.monotonic()))
            else:
                # As fast as the client reads: blocks of 500 events, waiting whenever the socket's buffer is full.
                await self.can_write.wait()
                upto = min(last, n + 500)
                now = time.monotonic_ns()
                self.chunk("".join(sse_frame(i, now) for i in range(n + 1, upto + 1)))
                STATE["written"] += upto - n
                n = upto
                await asyncio.sleep(0)
        # Open and silent after the last event, like a quiet feed; the bench stops the watcher.
        await asyncio.Event().wait()


async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Handler, "127.0.0.1", 0, backlog=512)
    print(json.dumps({"port": server.sockets[0].getsockname()[1]}), flush=True)
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
