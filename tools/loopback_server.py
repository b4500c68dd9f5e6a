#!/usr/bin/env python3
"""A tiny HTTP/1.1 server on 127.0.0.1 for the URLSession transport tests and `make bench`.

Not the sandbox: it only knows a few fixed routes, so the transport can be measured and tested over real
sockets with nothing else in the way. Each response is written in one go with TCP_NODELAY (Nagle plus
delayed ACK would otherwise stall small requests). Prints {"port": N} on the first stdout line.

Routes (any method):
  /v2/staff          a ~1 KB StaffMemberPage
  /v2/redirect       302 with Location: https://elsewhere.example/steal
  /v2/stream         text/event-stream, three frames 50 ms apart
  /v2/slow-stream    text/event-stream with X-Accel-Buffering: no: the headers and a comment at once, then one frame
                     every `interval` seconds (1) until `seconds` (5) have passed, then the end
                     (?seconds=3&interval=0.5; tools/net_harness.py's tests: buffering and idle proxies)
  /v2/hang           never answers
  /v2/echo           200 JSON of the request's method, headers, body length and the client's port
                     (the same port twice = a reused connection)
  /v2/close-soon     200 JSON, then closes the connection 2 ms later without announcing it (the keep-alive
                     pitfall of TOOLCHAIN-NOTES)
  /v2/basic-401      401 with WWW-Authenticate: Basic and an OAuth error body (so do /oauth/token and
                     /oauth/device_authorization)
  /v2/quiet-stream   text/event-stream: one comment, then nothing until the client goes (an idle feed)
  /v2/flood          text/event-stream written as fast as the client takes it (64 KB frames, at most 1 GB);
                     /v2/flood-sent tells how many bytes the server got rid of so far (back-pressure seen from here)
  /v2/encoded        the /v2/staff page with Content-Encoding: ?encoding= (gzip, deflate, br, zstd, identity;
                     br and zstd as stored blocks, valid but not smaller), or ?corrupt=1 for a gzip header
                     followed by bytes that are no deflate data; X-Seen-Accept-Encoding says what the request
                     asked for ("(none)" without the header)
  /v2/big-list       a ~200 KB StaffMemberPage (1,600 members), gzip-compressed with ?encoding=gzip (`make bench`:
                     a large list over a slow path, compressed or not)
  /v2/encoded-stream text/event-stream in gzip: one frame, flushed, then nothing until the client goes
  /v2/huge-head      200 with a 100 KB header (more than any client should accept)
  /v2/bad-status     an answer whose status line is not HTTP
  CONNECT, or a request in absolute form (http://…): 407 with Proxy-Authenticate: Basic realm="loopback-proxy" — a
                     forward proxy that wants its own login
  /oauth/revoke      400 OAuth error whose error_description is the request's Accept-Language, or
                     "(none)" without one (the OAuth requests' headers, seen through the library's OAuth error)
Writes, each recorded in /v2/writes (the head as soon as it is in, so a request whose body never comes shows):
  /v2/write                 200 JSON of the body's length
  /v2/write-drop-first      reads the whole request and closes without answering the first time an
                            Idempotency-Key is seen; answers it later
  /v2/write-drop-if-reused  reads the whole request and closes without answering unless it is the first
                            request on its connection (what makes libcurl re-send a request on a new connection)
  /v2/write-close-soon      answers, then closes the connection 2 ms later without announcing it
  /v2/writes                GET: the recorded writes [{path, key, length, declared, sha256, complete, first}]
  /v2/write-quiet           200 JSON of the body's length like /v2/write, but not recorded: `make bench` sends
                            tens of thousands of writes per run, and the record would only grow
"""
import hashlib
import asyncio
import json
import socket
import sys
import urllib.parse
import zlib

STAFF = json.dumps({
    "data": [
        {"id": f"emp_{i}", "name": f"Zaměstnanec číslo {i}", "role": "waiter", "active": True, "card_registered": i % 2 == 0}
        for i in range(1, 12)
    ],
    "next_cursor": None,
}, ensure_ascii=False).encode()

BIG_LIST = json.dumps({
    "data": [
        {"id": f"emp_{i}", "name": f"Zaměstnanec číslo {i} ze směny {i % 7}", "role": ("waiter", "cook", "manager")[i % 3],
         "active": i % 5 != 0, "card_registered": i % 2 == 0}
        for i in range(1, 1601)
    ],
    "next_cursor": None,
}, ensure_ascii=False).encode()
BIG_LIST_GZIP = zlib.compress(BIG_LIST, wbits=31)


def brotli_stored(data):
    """`data` as a brotli stream of uncompressed meta-blocks (RFC 7932 §9.2): valid for any decoder, not smaller."""
    out = bytearray()
    bits = [0, 0]  # the pending bits and how many

    def put(value, count):
        bits[0] |= value << bits[1]
        bits[1] += count
        while bits[1] >= 8:
            out.append(bits[0] & 0xFF)
            bits[0] >>= 8
            bits[1] -= 8

    def align():
        if bits[1]:
            out.append(bits[0] & 0xFF)
            bits[0] = bits[1] = 0

    put(0, 1)  # WBITS = 16
    for start in range(0, len(data), 16384):
        block = data[start:start + 16384]
        put(0, 1)  # ISLAST = 0
        put(0, 2)  # MNIBBLES = 4
        put(len(block) - 1, 16)
        put(1, 1)  # ISUNCOMPRESSED
        align()
        out.extend(block)
    put(1, 1)  # ISLAST
    put(1, 1)  # ISLASTEMPTY
    align()
    return bytes(out)


def zstd_raw(data):
    """`data` as one zstd frame of raw blocks (RFC 8878): valid for any decoder, not smaller."""
    out = bytearray(b"\x28\xb5\x2f\xfd")  # the magic number
    out += bytes([0x00, 0x38])  # no content size, checksum or dictionary; a 128 KB window
    blocks = [data[i:i + 65536] for i in range(0, len(data), 65536)] or [b""]
    for index, block in enumerate(blocks):
        header = (1 if index == len(blocks) - 1 else 0) | (len(block) << 3)  # Block_Type 0: raw
        out += header.to_bytes(3, "little")
        out += block
    return bytes(out)


def encode(data, encoding):
    if encoding == "gzip":
        return zlib.compress(data, wbits=31)
    if encoding == "deflate":
        return zlib.compress(data)  # HTTP's deflate is the zlib format (RFC 9110 §8.4.1.2)
    if encoding == "br":
        return brotli_stored(data)
    if encoding == "zstd":
        return zstd_raw(data)
    return data


def response(status, reason, body=b"", headers=(), close=False):
    head = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(body)}"]
    head += [f"{k}: {v}" for k, v in headers]
    if close:
        head.append("Connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


WRITES = []  # every write request seen, in order
DROPPED = set()  # Idempotency-Keys /v2/write-drop-first has dropped once
UNRECORDED = ("/v2/writes", "/v2/write-quiet")  # paths under /v2/write that WRITES leaves out
FLOOD = {"sent": 0}  # bytes /v2/flood has handed to its socket, all floods together


class Handler(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport
        sock = transport.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""
        self.served = 0  # requests answered or dropped on this connection
        self.pending = None  # the record of a write whose body is still coming
        self.writable = asyncio.Event()  # cleared while the socket's send buffer is full (flow control)
        self.writable.set()

    def pause_writing(self):
        self.writable.clear()

    def resume_writing(self):
        self.writable.set()

    def connection_lost(self, exc):
        self.writable.set()

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
            method, path, _ = head[0].split(" ", 2)
            if path.startswith("/v2/write") and path not in UNRECORDED and self.pending is None:
                self.pending = {"path": path, "key": headers.get("idempotency-key"), "declared": length,
                                "length": 0, "sha256": None, "complete": False, "first": self.served == 0}
                WRITES.append(self.pending)
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4:end + 4 + length]
            self.buffer = self.buffer[end + 4 + length:]
            if self.pending is not None:
                self.pending.update(length=len(body), sha256=hashlib.sha256(body).hexdigest(), complete=True)
                self.pending = None
            close = headers.get("connection", "").lower() == "close"
            first = self.served == 0
            self.served += 1
            if not self.write(path.split("?")[0], headers, body, first, close):
                self.answer(method, path.split("?")[0], headers, body, close, path.partition("?")[2])
            if close or self.transport.is_closing():
                return

    def answer(self, method, path, headers, body, close, query=""):
        t = self.transport
        if method == "CONNECT" or path.startswith("http://"):
            t.write(response(407, "Proxy Authentication Required", b"proxy login needed",
                             [("Proxy-Authenticate", 'Basic realm="loopback-proxy"')], True))
            t.close()
            return
        if path == "/v2/staff":
            t.write(response(200, "OK", STAFF, [("Content-Type", "application/json")], close))
        elif path == "/v2/redirect":
            t.write(response(302, "Found", b"", [("Location", "https://elsewhere.example/steal")], close))
        elif path == "/v2/echo":
            peer = t.get_extra_info("peername")[1]
            echo = json.dumps({"method": method, "headers": headers, "body_length": len(body), "peer_port": peer}).encode()
            t.write(response(200, "OK", echo, [("Content-Type", "application/json")], close))
        elif path == "/oauth/revoke":
            seen = headers.get("accept-language", "(none)")
            error = json.dumps({"error": "invalid_request", "error_description": seen}).encode()
            t.write(response(400, "Bad Request", error, [("Content-Type", "application/json")], close))
        elif path == "/v2/stream":
            asyncio.ensure_future(self.stream())
            return
        elif path == "/v2/slow-stream":
            asyncio.ensure_future(self.slow_stream(query))
            return
        elif path == "/v2/hang":
            return
        elif path == "/v2/quiet-stream":
            t.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                    b"6\r\n: hi\n\n\r\n")
            return
        elif path == "/v2/flood":
            asyncio.ensure_future(self.flood())
            return
        elif path == "/v2/flood-sent":
            t.write(response(200, "OK", json.dumps(FLOOD).encode(), [("Content-Type", "application/json")], close))
        elif path == "/v2/encoded":
            options = dict(urllib.parse.parse_qsl(query))
            encoding = options.get("encoding", "gzip")
            data = encode(STAFF, encoding)
            if options.get("corrupt"):
                data = zlib.compress(STAFF, wbits=31)[:10] + b"\xff" * 32  # block type 3 does not exist
            seen = headers.get("accept-encoding", "(none)")
            extra = [] if encoding == "identity" else [("Content-Encoding", encoding)]
            t.write(response(200, "OK", data, [("Content-Type", "application/json"), ("X-Seen-Accept-Encoding", seen),
                                               *extra], close))
        elif path == "/v2/big-list":
            gzip = dict(urllib.parse.parse_qsl(query)).get("encoding") == "gzip"
            extra = [("Content-Encoding", "gzip")] if gzip else []
            t.write(response(200, "OK", BIG_LIST_GZIP if gzip else BIG_LIST,
                             [("Content-Type", "application/json"), *extra], close))
        elif path == "/v2/encoded-stream":
            compressor = zlib.compressobj(wbits=31)
            data = compressor.compress(b"id: 1\ndata: frame 1\n\n") + compressor.flush(zlib.Z_SYNC_FLUSH)
            t.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n" + f"{len(data):x}\r\n".encode() + data + b"\r\n")
            return
        elif path == "/v2/huge-head":
            t.write(response(200, "OK", b"{}", [("Content-Type", "application/json"), ("X-Big", "a" * 100_000)], close))
        elif path == "/v2/bad-status":
            t.write(b"HTTP/1.1 2x0 Whatever\r\nContent-Length: 2\r\n\r\n{}")
            t.close()
            return
        elif path == "/v2/close-soon":
            t.write(response(200, "OK", b'{"ok":true}', [("Content-Type", "application/json")], close))
            asyncio.get_running_loop().call_later(0.002, t.close)
            return
        else:
            t.write(response(404, "Not Found", b"", [], close))
        if close:
            t.close()

    def write(self, path, headers, body, first, close):
        """The write routes and the 401 challenge; False for any other path."""
        t = self.transport
        ok = response(200, "OK", json.dumps({"length": len(body)}).encode(), [("Content-Type", "application/json")], close)
        if path == "/v2/writes":
            t.write(response(200, "OK", json.dumps(WRITES).encode(), [("Content-Type", "application/json")], close))
        elif path in ("/v2/basic-401", "/oauth/token", "/oauth/device_authorization"):
            t.write(response(401, "Unauthorized", b'{"error":"invalid_client","error_description":"bad secret"}',
                             [("Content-Type", "application/json"), ("WWW-Authenticate", 'Basic realm="profirest"')], close))
        elif path in ("/v2/write", "/v2/write-quiet"):
            t.write(ok)
        elif path == "/v2/write-drop-first":
            key = headers.get("idempotency-key")
            if key not in DROPPED:
                DROPPED.add(key)
                t.close()
                return True
            t.write(ok)
        elif path == "/v2/write-drop-if-reused":
            if not first:
                t.close()
                return True
            t.write(ok)
        elif path == "/v2/write-close-soon":
            t.write(ok)
            asyncio.get_running_loop().call_later(0.002, t.close)
            return True
        else:
            return False
        if close:
            t.close()
        return True

    async def flood(self):
        t = self.transport
        t.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        frame = b"data: " + b"x" * (64 * 1024 - 8) + b"\n\n"
        chunk = f"{len(frame):x}\r\n".encode() + frame + b"\r\n"
        for _ in range(16 * 1024):  # at most 1 GB
            if t.is_closing():
                return
            await self.writable.wait()
            t.write(chunk)
            # Counted once the socket took it: what sits in asyncio's own buffer is not "sent".
            FLOOD["sent"] += len(chunk)

    async def stream(self):
        t = self.transport
        t.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        for i in range(3):
            frame = f"id: {i}\ndata: frame {i}\n\n".encode()
            t.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
            await asyncio.sleep(0.05)
        t.write(b"0\r\n\r\n")

    async def slow_stream(self, query):
        options = dict(urllib.parse.parse_qsl(query))
        seconds, interval = float(options.get("seconds", 5)), float(options.get("interval", 1))
        t = self.transport

        def chunk(data):
            t.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

        t.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                b"X-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk(b": open\n\n")
        for i in range(round(seconds / interval)):
            await asyncio.sleep(interval)
            if t.is_closing():
                return
            chunk(f"id: {i}\ndata: frame {i}\n\n".encode())
        if not t.is_closing():
            t.write(b"0\r\n\r\n")


async def main():
    loop = asyncio.get_running_loop()
    # --host ::1 listens on the IPv6 loopback instead (the host-parsing tests reach it by its spellings).
    host = sys.argv[sys.argv.index("--host") + 1] if "--host" in sys.argv else "127.0.0.1"
    server = await loop.create_server(Handler, host, 0, backlog=512)
    port = server.sockets[0].getsockname()[1]
    print(json.dumps({"port": port}), flush=True)
    # Stop when the parent closes our stdin (the test or bench ended), so no server outlives its user.
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
