#!/usr/bin/env python3
"""A tiny HTTP/1.1 server on 127.0.0.1 for the URLSession transport tests and `make bench`.

Not the sandbox: it only knows a few fixed routes, so the transport can be measured and tested over real
sockets with nothing else in the way. Each response is written in one go with TCP_NODELAY (Nagle plus
delayed ACK would otherwise stall small requests). Prints {"port": N} on the first stdout line.

Routes (any method):
  /v2/staff          a ~1 KB StaffMemberPage
  /v2/redirect       302 with Location: https://elsewhere.example/steal
  /v2/stream         text/event-stream, three frames 50 ms apart
  /v2/hang           never answers
  /v2/echo           200 JSON of the request's method, headers, body length and the client's port
                     (the same port twice = a reused connection)
  /v2/close-soon     200 JSON, then closes the connection 2 ms later without announcing it (the keep-alive
                     pitfall of TOOLCHAIN-NOTES)
"""
import asyncio
import json
import socket
import sys

STAFF = json.dumps({
    "data": [
        {"id": f"emp_{i}", "name": f"Zaměstnanec číslo {i}", "role": "waiter", "active": True, "card_registered": i % 2 == 0}
        for i in range(1, 12)
    ],
    "next_cursor": None,
}, ensure_ascii=False).encode()


def response(status, reason, body=b"", headers=(), close=False):
    head = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(body)}"]
    head += [f"{k}: {v}" for k, v in headers]
    if close:
        head.append("Connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class Handler(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport
        sock = transport.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

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
            method, path, _ = head[0].split(" ", 2)
            close = headers.get("connection", "").lower() == "close"
            self.answer(method, path.split("?")[0], headers, body, close)
            if close:
                return

    def answer(self, method, path, headers, body, close):
        t = self.transport
        if path == "/v2/staff":
            t.write(response(200, "OK", STAFF, [("Content-Type", "application/json")], close))
        elif path == "/v2/redirect":
            t.write(response(302, "Found", b"", [("Location", "https://elsewhere.example/steal")], close))
        elif path == "/v2/echo":
            peer = t.get_extra_info("peername")[1]
            echo = json.dumps({"method": method, "headers": headers, "body_length": len(body), "peer_port": peer}).encode()
            t.write(response(200, "OK", echo, [("Content-Type", "application/json")], close))
        elif path == "/v2/stream":
            asyncio.ensure_future(self.stream())
            return
        elif path == "/v2/hang":
            return
        elif path == "/v2/close-soon":
            t.write(response(200, "OK", b'{"ok":true}', [("Content-Type", "application/json")], close))
            asyncio.get_running_loop().call_later(0.002, t.close)
            return
        else:
            t.write(response(404, "Not Found", b"", [], close))
        if close:
            t.close()

    async def stream(self):
        t = self.transport
        t.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        for i in range(3):
            frame = f"id: {i}\ndata: frame {i}\n\n".encode()
            t.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
            await asyncio.sleep(0.05)
        t.write(b"0\r\n\r\n")


async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Handler, "127.0.0.1", 0, backlog=512)
    port = server.sockets[0].getsockname()[1]
    print(json.dumps({"port": port}), flush=True)
    # Stop when the parent closes our stdin (the test or bench ended), so no server outlives its user.
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
