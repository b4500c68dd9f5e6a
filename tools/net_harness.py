#!/usr/bin/env python3
"""A real-network harness for tests and `make bench`: nginx with TLS from a private CA in front of any local
HTTP/1.1 server, plus a TCP proxy that adds latency and can leave connections half-open.

    python3 tools/net_harness.py --upstream http://127.0.0.1:PORT [--delay-ms 50] [--short-idle-seconds 5]
                                 [--h2-max-streams 2000]

Python 3.11 standard library only, plus the `openssl` and `nginx` programs (Debian's `nginx` package: 1.22 with
ssl, http2 and auth_basic). Everything lives in a fresh temporary directory that is removed at the end: two private
CAs made with `openssl` (EC P-256), a server certificate for 127.0.0.1 and localhost (subjectAltName IP and DNS) from
each, the nginx configuration, its pid, error log and temp paths. nginx runs in the foreground (`daemon off`) as
this process's child, on free loopback ports.

Like tools/loopback_server.py, the harness is a child process with one JSON object on the first line of its stdout:

    {"ca_file": "/tmp/net-harness-…/ca.pem",                 # the CA that signed every block but `untrusted`
     "untrusted_ca_file": "/tmp/net-harness-…/untrusted-ca.pem",  # the unrelated CA that signed `untrusted`
     "host": "127.0.0.1",
     "nginx": {"h2": 41001, "h1": 41002, "h1_buffering": 41003, "h1_short_idle": 41004, "basic": 41005,
               "untrusted": 41006},                          # nginx's own TLS ports
     "delayed": {"h2": 41101, "h1": 41102, "h1_buffering": 41103, "h1_short_idle": 41104, "basic": 41105,
                 "untrusted": 41106, "upstream": 41107},     # the TCP proxy's ports, one in front of each of those,
                                                             # and one straight to the upstream (plain HTTP)
     "basic_user": "proxyuser", "basic_password": "…",       # for the `basic` block
     "nginx_version": "1.22.1",
     "pid": 12345,                                           # nginx's master process
     "delay_ms": 0, "short_idle_seconds": 5.0, "upstream": "http://127.0.0.1:PORT",
     "temp_dir": "/tmp/net-harness-…"}

On failure the one line is {"error": "…"} instead: exit status 3 when nginx or openssl is not installed (callers
skip locally and fail in CI), 1 for anything else.

nginx blocks (server blocks; each proxies every path to the upstream over HTTP/1.1 with keep-alive, with
`Connection ""`, `Host $http_host`, X-Forwarded-Proto https, X-Forwarded-Host, X-Forwarded-For and
`Forwarded: proto=https;host="…"`; Authorization goes through untouched; keepalive_timeout 75s; nginx's
defaults otherwise, e.g. proxy_read_timeout 60s, the request body read whole before it is sent on):
  h2             TLS with HTTP/2 (ALPN h2 and http/1.1); an upstream's `X-Accel-Buffering: no` is honoured (as
                 in h1: without that header nginx buffers, and a slow stream is held back as in h1_buffering);
                 with --h2-max-streams N a connection may carry N streams at once (nginx's default: 128) and any
                 number of requests, and the worker takes 2 N + 256 connections (a partner's thousand event streams)
  h1             TLS, HTTP/1.1 only
  h1_buffering   TLS, HTTP/1.1; ignores X-Accel-Buffering and buffers responses like a buffering proxy or CDN: a slow
                 event stream reaches the client, headers included, only when 64 KB have piled up or it ends
                 (proxy_buffering on and ssl_buffer_size 64k: it is nginx's TLS buffer that holds the unflushed
                 output; see nginx_config)
  h1_short_idle  TLS, HTTP/1.1; proxy_read_timeout --short-idle-seconds (5): a stream quiet that long is cut
  basic          TLS, HTTP/1.1; auth_basic "proxy-realm" (basic_user / basic_password) on every path
  untrusted      TLS, HTTP/1.1, with the certificate of the untrusted CA

The TCP proxy (`delayed`) forwards bytes both ways, each chunk written --delay-ms after it was read (latency,
not a throughput limit; order kept; TCP_NODELAY on both sides; a half-close is passed on). Connection setup itself is
not delayed (the kernel answers the client's SYN), so a fresh request pays 2 × delay plus 2 × delay per TLS
round trip.

Commands, one a line on stdin; each is answered with one JSON line on stdout:
  freeze   every connection the TCP proxy holds now stops forwarding without being closed: nothing more is read
           from either side or written to it (queued delayed bytes are dropped), no FIN, no RST — a half-open
           connection as seen through a dead NAT or a vanished peer. New connections keep working. The frozen
           sockets stay open until the harness stops.
           -> {"ok": "freeze", "connections": 3}   (how many were frozen by this command)
  thaw     marks the end of the outage. freeze never touched new connections, so nothing changes on the wire;
           the connections frozen earlier stay frozen (a dead path does not come back).
           -> {"ok": "thaw", "frozen": 3}   (connections still held frozen)
  stats    -> {"ok": "stats", "connections": 2, "frozen": 3}
  anything else -> {"error": "unknown command: …"}

End of stdin, SIGTERM, SIGINT or SIGHUP stops everything (nginx included, then the temporary directory is removed);
so does the parent's death (the harness watches its parent process id), and nginx gets SIGTERM if the harness itself
is killed (PR_SET_PDEATHSIG; a SIGKILL leaves the temporary directory behind). If nginx dies on its own, the harness
stops too (exit status 1).
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import ctypes
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

HOST = "127.0.0.1"
BLOCKS = ("h2", "h1", "h1_buffering", "h1_short_idle", "basic", "untrusted")
BASIC_USER = "proxyuser"
IN_FLIGHT = 16 << 20  # bytes the TCP proxy holds for a slow reader, each way of each connection
READY_SECONDS = 20.0  # how long nginx may take to serve on every port (both cores may be busy)


class HarnessError(Exception):
    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------------------------------------------------- TLS


def run(*args: str, cwd: Path) -> None:
    done = subprocess.run(args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise HarnessError(f"{' '.join(args[:3])} failed: {done.stdout.decode(errors='replace')[-500:]}")


def make_chain(directory: Path, prefix: str, ca_name: str, openssl: str) -> None:
    """{prefix}ca.pem (a self-signed CA) and {prefix}server.pem/.key signed by it for 127.0.0.1 and localhost."""
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
    run(openssl, "req", "-x509", *ec, "-days", "30", "-subj", f"/CN={ca_name}",
        "-keyout", f"{prefix}ca.key", "-out", f"{prefix}ca.pem",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        cwd=directory)
    run(openssl, "req", "-new", *ec, "-subj", "/CN=127.0.0.1", "-keyout", f"{prefix}server.key",
        "-out", f"{prefix}server.csr", cwd=directory)
    (directory / f"{prefix}server.ext").write_text(
        "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run(openssl, "x509", "-req", "-in", f"{prefix}server.csr", "-CA", f"{prefix}ca.pem", "-CAkey", f"{prefix}ca.key",
        "-set_serial", str(secrets.randbits(63)), "-days", "30", "-extfile", f"{prefix}server.ext",
        "-out", f"{prefix}server.pem", cwd=directory)


def make_certificates(directory: Path, openssl: str) -> None:
    """Both chains at once (two threads: each is a few short openssl runs)."""
    errors: list[BaseException] = []

    def chain(prefix: str, name: str) -> None:
        try:
            make_chain(directory, prefix, name, openssl)
        except BaseException as error:  # noqa: BLE001 - handed to the caller
            errors.append(error)

    threads = [threading.Thread(target=chain, args=a) for a in (("", "ProfirestAPI test CA"),
                                                                ("untrusted-", "Untrusted test CA"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def htpasswd_line(user: str, password: str) -> str:
    """One line of an nginx auth_basic_user_file in the {SSHA} scheme (salted SHA-1, base64 of digest + salt)."""
    salt = secrets.token_bytes(8)
    digest = hashlib.sha1(password.encode() + salt).digest()
    return f"{user}:{{SSHA}}{base64.b64encode(digest + salt).decode()}\n"


# -------------------------------------------------------------------------------------------------------- nginx


def free_ports(count: int) -> list[int]:
    """Ports the kernel hands out now (bound to port 0, then released): nginx binds them next, so a collision with
    another process is possible but rare, and start_nginx retries with new ports when it happens."""
    socks, ports = [], []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind((HOST, 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def nginx_config(d: Path, ports: dict[str, int], upstream: str, short_idle: float, h2_streams: int | None = None) -> str:
    """The whole nginx.conf: every path inside d, one server block per name of BLOCKS. With h2_streams, the h2 block
    lets a client open that many streams on one connection (nginx's default is 128) and keeps a connection for any
    number of requests, and the worker takes enough connections for as many proxied streams."""
    u = urlsplit(upstream)
    user = "user root root;\n" if os.geteuid() == 0 else ""  # see start_nginx

    def tls(prefix: str = "") -> str:
        return f"ssl_certificate {d}/{prefix}server.pem; ssl_certificate_key {d}/{prefix}server.key;"

    blocks = {
        "h2": f"listen {HOST}:{ports['h2']} ssl http2; {tls()}"
              + (f"\n        http2_max_concurrent_streams {h2_streams}; keepalive_requests 10000000;" if h2_streams else ""),
        "h1": f"listen {HOST}:{ports['h1']} ssl; {tls()}",
        # A buffering proxy/CDN. Seen with nginx 1.22.1: with proxy_buffering on, nginx passes the header and the
        # body on without a flush, and its TLS layer keeps unflushed output until ssl_buffer_size is full or the
        # response ends (the default 16k held a 16,000-byte burst, sent 20,000 at once; postpone_output 0 changed
        # nothing). With ssl_buffer_size 64k a 60,000-byte burst waited for the end, 70,000 went at once.
        "h1_buffering": f"listen {HOST}:{ports['h1_buffering']} ssl; {tls()}\n"
                        "        proxy_ignore_headers X-Accel-Buffering; proxy_buffering on; ssl_buffer_size 64k;\n"
                        "        proxy_buffer_size 64k; proxy_buffers 8 64k; proxy_busy_buffers_size 128k;",
        "h1_short_idle": f"listen {HOST}:{ports['h1_short_idle']} ssl; {tls()}\n"
                         f"        proxy_read_timeout {short_idle:g}s;",
        "basic": f"listen {HOST}:{ports['basic']} ssl; {tls()}\n"
                 f'        auth_basic "proxy-realm"; auth_basic_user_file {d}/htpasswd;',
        "untrusted": f"listen {HOST}:{ports['untrusted']} ssl; {tls('untrusted-')}",
    }
    servers = "".join(f"    server {{ # {name}\n        {body}\n        location / {{ proxy_pass http://upstream; }}\n    }}\n"
                      for name, body in blocks.items())
    # Each proxied stream holds a client side and an upstream connection (HTTP/2 streams share the client's).
    connections = max(1024, 2 * (h2_streams or 0) + 256)
    limits = f"worker_rlimit_nofile {2 * connections};\n" if h2_streams else ""
    return f"""# Written by tools/net_harness.py; lives and dies with it.
{user}daemon off;
master_process on;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
{limits}events {{ worker_connections {connections}; }}
http {{
    access_log off;
    client_body_temp_path {d}/temp/client_body;
    proxy_temp_path {d}/temp/proxy;
    fastcgi_temp_path {d}/temp/fastcgi;
    uwsgi_temp_path {d}/temp/uwsgi;
    scgi_temp_path {d}/temp/scgi;
    keepalive_timeout 75s;
    client_max_body_size 64m;
    ssl_protocols TLSv1.2 TLSv1.3;
    upstream upstream {{
        server {u.hostname}:{u.port};
        keepalive 32;
    }}
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header Host $http_host;
    proxy_set_header X-Forwarded-Proto https;
    proxy_set_header X-Forwarded-Host $http_host;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    proxy_set_header Forwarded "proto=https;host=\\"$http_host\\"";
    # What the client's connection was, for tests: the protocol it spoke and nginx's serial number of the
    # connection (the same number twice = a kept connection).
    add_header X-Served-Protocol $server_protocol always;
    add_header X-Client-Connection $connection always;
{servers}}}
"""


HARNESS_PID = os.getpid()


def die_with_parent() -> None:
    """In nginx's master, between fork and exec: SIGTERM (nginx's fast shutdown) when the harness dies."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != HARNESS_PID:  # the harness died before prctl
        os._exit(1)


def serves_tls(port: int) -> bool:
    """A TLS handshake completes on port: a worker (not only the master's listen socket) is serving."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((HOST, port), timeout=2) as raw, context.wrap_socket(raw) as tls:
            tls.do_handshake()
        return True
    except OSError:
        return False


def start_nginx(nginx: str, d: Path, upstream: str, short_idle: float,
                h2_streams: int | None = None) -> tuple[subprocess.Popen, dict[str, int]]:
    """nginx on free ports, once every port completes a TLS handshake; new ports when one was taken meanwhile.

    `user root` is written when the harness runs as root: workers would otherwise run as `nobody` and could neither
    read the htpasswd file (a 500 for every `basic` request) nor write proxy temp files in the 0700 directory."""
    for attempt in range(5):
        ports = dict(zip(BLOCKS, free_ports(len(BLOCKS))))
        (d / "nginx.conf").write_text(nginx_config(d, ports, upstream, short_idle, h2_streams))
        stderr = open(d / "nginx.stderr", "wb")
        process = subprocess.Popen([nginx, "-p", str(d), "-e", str(d / "error.log"), "-c", str(d / "nginx.conf")],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
                                   preexec_fn=die_with_parent, process_group=0)
        stderr.close()
        deadline = time.monotonic() + READY_SECONDS
        waiting = list(ports.values())
        while waiting and process.poll() is None and time.monotonic() < deadline:
            if serves_tls(waiting[0]):
                waiting.pop(0)
            else:
                time.sleep(0.02)
        if not waiting:
            return process, ports
        exited = process.poll() is not None
        stop_nginx(process)
        log = "".join(f.read_text(errors="replace") for f in (d / "nginx.stderr", d / "error.log") if f.exists())
        if exited and "Address already in use" in log and attempt < 4:
            (d / "error.log").unlink(missing_ok=True)
            continue
        if exited:
            raise HarnessError(f"nginx did not start (exit {process.returncode}): {log[-800:]}")
        raise HarnessError(f"nginx did not serve on every port within {READY_SECONDS:g} s: {log[-800:]}")
    raise AssertionError("unreachable")


def stop_nginx(process: subprocess.Popen) -> None:
    """SIGTERM to the master: nginx's fast shutdown, the master exits once its workers have. If it is not gone after
    5 s, or it had died on its own (its workers may be left), SIGKILL to its whole process group (its own, so the
    group id is the master's pid)."""
    died_alone = process.poll() is not None
    if not died_alone:
        process.terminate()
        try:
            process.wait(5)
            return
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait(5)


def nginx_version(nginx: str) -> str:
    out = subprocess.run([nginx, "-v"], stdin=subprocess.DEVNULL, capture_output=True, text=True)
    found = re.search(r"nginx/(\S+)", out.stderr + out.stdout)
    return found.group(1) if found else "unknown"


# ---------------------------------------------------------------------------------------------------- TCP proxy


class Connection:
    """One proxied connection: two pumps (client→target, target→client) that freeze() stops without closing."""

    def __init__(self, proxy: "DelayProxy", client: socket.socket, target: socket.socket):
        self.proxy, self.client, self.target = proxy, client, target
        self.frozen = False
        self.pumps: list[asyncio.Task] = []

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        self.pumps = [loop.create_task(self.pump(self.client, self.target)),
                      loop.create_task(self.pump(self.target, self.client))]
        try:
            await asyncio.gather(*self.pumps)
        except asyncio.CancelledError:
            if not self.frozen:
                raise
        except OSError:
            pass  # a reset or a broken pipe on either side: close both
        finally:
            if not self.frozen:
                # Closed only once the pumps are gone: a cancelled sock_recv unregisters its file descriptor a moment
                # later, and would unregister a new connection's socket that got the same number meanwhile.
                for p in self.pumps:
                    p.cancel()
                await asyncio.gather(*self.pumps, return_exceptions=True)
                self.close()

    async def pump(self, src: socket.socket, dst: socket.socket) -> None:
        """Bytes from src to dst, each chunk written delay after it was read; then dst's write side is shut."""
        loop = asyncio.get_running_loop()
        delay = self.proxy.delay
        if delay <= 0:
            while data := await loop.sock_recv(src, 65536):
                await loop.sock_sendall(dst, data)
        else:
            queue: asyncio.Queue = asyncio.Queue()
            room = asyncio.Event()  # set while fewer than IN_FLIGHT bytes wait in the queue
            room.set()
            queued = 0

            async def reader() -> None:
                nonlocal queued
                while True:
                    data = await loop.sock_recv(src, 65536)
                    queue.put_nowait((loop.time() + delay, data or None))
                    if not data:
                        return
                    queued += len(data)
                    if queued >= IN_FLIGHT:  # dst reads slower than src writes: stop reading, like a full window
                        room.clear()
                        await room.wait()

            async def writer() -> None:
                nonlocal queued
                while True:
                    due, chunk = await queue.get()
                    queued -= len(chunk or b"")
                    if queued < IN_FLIGHT:
                        room.set()
                    wait = due - loop.time()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    if chunk is None:
                        return
                    await loop.sock_sendall(dst, chunk)

            tasks = [loop.create_task(reader()), loop.create_task(writer())]
            try:
                await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
                for task in tasks:
                    if task.done():
                        task.result()  # a failure of either; else both ended (end of input, all written)
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def freeze(self) -> None:
        self.frozen = True
        for p in self.pumps:
            p.cancel()

    def close(self) -> None:
        for s in (self.client, self.target):
            try:
                s.close()
            except OSError:
                pass


class DelayProxy:
    def __init__(self, delay_ms: float):
        self.delay = delay_ms / 1000
        self.live: set[Connection] = set()
        self.frozen: list[Connection] = []
        self.listeners: list[socket.socket] = []
        self.tasks: set[asyncio.Task] = set()

    def listen(self, target_port: int) -> int:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((HOST, 0))
        s.listen(512)
        s.setblocking(False)
        self.listeners.append(s)
        self.spawn(self.accept(s, target_port))
        return s.getsockname()[1]

    def spawn(self, coroutine) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def accept(self, listener: socket.socket, target_port: int) -> None:
        loop = asyncio.get_running_loop()
        while True:
            client, _ = await loop.sock_accept(listener)
            self.spawn(self.serve(client, target_port))

    async def serve(self, client: socket.socket, target_port: int) -> None:
        loop = asyncio.get_running_loop()
        client.setblocking(False)
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        target = socket.socket()
        target.setblocking(False)
        target.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            await loop.sock_connect(target, (HOST, target_port))
        except OSError:
            client.close()
            target.close()
            return
        connection = Connection(self, client, target)
        self.live.add(connection)
        try:
            await connection.run()
        finally:
            self.live.discard(connection)

    def freeze(self) -> int:
        count = 0
        for connection in list(self.live):
            connection.freeze()
            self.live.discard(connection)
            self.frozen.append(connection)
            count += 1
        return count

    def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        for s in self.listeners:
            s.close()
        for connection in list(self.live) + self.frozen:
            connection.close()


# --------------------------------------------------------------------------------------------------------- main


def say(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def watch_stdin(loop: asyncio.AbstractEventLoop, lines: asyncio.Queue) -> None:
    """A thread: each stdin line into lines, None at end of input. os.read, not sys.stdin: a daemon thread blocked
    inside sys.stdin's buffered reader holds its lock, and the interpreter's exit then dies on that lock."""
    def read() -> None:
        pending = b""
        try:
            while chunk := os.read(0, 4096):
                pending += chunk
                *complete, pending = pending.split(b"\n")
                for raw in complete:
                    loop.call_soon_threadsafe(lines.put_nowait, raw.decode(errors="replace").strip())
        except OSError:
            pass
        try:
            loop.call_soon_threadsafe(lines.put_nowait, None)
        except RuntimeError:
            pass  # the loop is already closed
    threading.Thread(target=read, name="stdin", daemon=True).start()


async def serve(args: argparse.Namespace, d: Path, nginx: str, process: subprocess.Popen, ports: dict[str, int],
                password: str) -> int:
    loop = asyncio.get_running_loop()
    proxy = DelayProxy(args.delay_ms)
    upstream_port = urlsplit(args.upstream).port
    delayed = {name: proxy.listen(port) for name, port in ports.items()}
    delayed["upstream"] = proxy.listen(upstream_port)
    lines: asyncio.Queue = asyncio.Queue()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, lines.put_nowait, None)
    say({"ca_file": str(d / "ca.pem"), "untrusted_ca_file": str(d / "untrusted-ca.pem"), "host": HOST,
         "nginx": ports, "delayed": delayed, "basic_user": BASIC_USER, "basic_password": password,
         "nginx_version": nginx_version(nginx), "pid": process.pid, "delay_ms": args.delay_ms,
         "short_idle_seconds": args.short_idle_seconds, "upstream": args.upstream, "temp_dir": str(d)})
    watch_stdin(loop, lines)
    parent = os.getppid()
    status = 0
    try:
        while True:
            try:
                line = await asyncio.wait_for(lines.get(), 0.5)
            except asyncio.TimeoutError:
                if os.getppid() != parent:
                    break  # the parent died without closing our stdin (someone else holds it)
                if process.poll() is not None:
                    print(f"net_harness: nginx exited ({process.returncode})", file=sys.stderr)
                    status = 1
                    break
                continue
            if line is None:
                break
            if not line:
                continue
            if line == "freeze":
                answer = {"ok": "freeze", "connections": proxy.freeze()}
            elif line == "thaw":
                answer = {"ok": "thaw", "frozen": len(proxy.frozen)}
            elif line == "stats":
                answer = {"ok": "stats", "connections": len(proxy.live), "frozen": len(proxy.frozen)}
            else:
                answer = {"error": f"unknown command: {line[:100]}"}
            try:
                say(answer)
            except (BrokenPipeError, OSError):
                break
    finally:
        proxy.close()
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", required=True, help="http://127.0.0.1:PORT, the HTTP/1.1 server behind nginx")
    parser.add_argument("--delay-ms", type=float, default=0.0, help="latency the TCP proxy adds each way")
    parser.add_argument("--short-idle-seconds", type=float, default=5.0, help="h1_short_idle's proxy_read_timeout")
    parser.add_argument("--h2-max-streams", type=int, default=None,
                        help="streams one HTTP/2 connection may carry (nginx: 128), for clients with many streams")
    parser.add_argument("--nginx", default=None, help="the nginx program (default: nginx on PATH or /usr/sbin/nginx)")
    args = parser.parse_args()
    upstream = urlsplit(args.upstream)
    if upstream.scheme != "http" or not upstream.hostname or not upstream.port:
        say({"error": f"--upstream must be http://HOST:PORT, not {args.upstream!r}"})
        return 2
    nginx = args.nginx or shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if not nginx or not os.access(nginx, os.X_OK):
        say({"error": f"nginx not installed: no {args.nginx or 'nginx'} on PATH or /usr/sbin/nginx "
                      "(Debian: apt-get install nginx)"})
        return 3
    openssl = shutil.which("openssl")
    if not openssl:
        say({"error": "openssl not installed: no openssl on PATH (Debian: apt-get install openssl)"})
        return 3
    d = Path(tempfile.mkdtemp(prefix="net-harness-"))
    process = None
    try:
        (d / "temp").mkdir()
        make_certificates(d, openssl)
        password = secrets.token_urlsafe(12)
        (d / "htpasswd").write_text(htpasswd_line(BASIC_USER, password))
        process, ports = start_nginx(nginx, d, args.upstream, args.short_idle_seconds, args.h2_max_streams)
        return asyncio.run(serve(args, d, nginx, process, ports, password))
    except HarnessError as error:
        say({"error": str(error)})
        return error.status
    finally:
        if process is not None:
            stop_nginx(process)
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # before the loop takes over: still clean up
    sys.exit(main())
