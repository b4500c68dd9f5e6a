"""tools/net_harness.py against tools/loopback_server.py, through Debian's curl and Python's ssl: nginx's blocks (HTTP/2,
HTTP/1.1, trust, basic auth, a buffering proxy, a short idle timeout), the TCP proxy's delay and its freeze, and that
the harness takes nginx with it when it stops. Timing checks only use lower bounds, or upper bounds many times the
expected value, so that they hold with both cores busy."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .conftest import REPO

DELAY_MS = 50
SHORT_IDLE = 1


def unavailable(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (.ci/run installs it)")
    pytest.skip(reason)


def read_line(stream, seconds: float = 60) -> str:
    """stream.readline(), failing the test instead of hanging when nothing comes."""
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    assert box, f"no line within {seconds} s"
    return box[0]


class Harness:
    def __init__(self, upstream_port: int, *args: str):
        self.proc = subprocess.Popen([sys.executable, str(REPO / "tools/net_harness.py"),
                                      "--upstream", f"http://127.0.0.1:{upstream_port}", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.info = json.loads(read_line(self.proc.stdout) or "{}")
        if "error" in self.info or not self.info:
            self.proc.wait(10)
            if self.proc.returncode == 3:
                unavailable(self.info["error"])
            pytest.fail(f"net_harness did not start: {self.info} (exit {self.proc.returncode})")

    def command(self, line: str) -> dict:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return json.loads(read_line(self.proc.stdout, 20))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def upstream():
    proc = subprocess.Popen([sys.executable, str(REPO / "tools/loopback_server.py")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    port = json.loads(read_line(proc.stdout))["port"]
    yield port
    proc.stdin.close()
    proc.wait(10)


@pytest.fixture(scope="module")
def harness(upstream):
    if not shutil.which("curl"):
        unavailable("curl is not installed (apt-get install curl)")
    h = Harness(upstream, "--delay-ms", str(DELAY_MS), "--short-idle-seconds", str(SHORT_IDLE))
    yield h
    h.stop()


def curl(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(["curl", "-sS", "--max-time", str(timeout), *args], capture_output=True, text=True,
                          timeout=timeout + 30)


def url(h: Harness, block: str, path: str = "/v2/echo", kind: str = "nginx") -> str:
    scheme = "http" if block == "upstream" else "https"
    return f"{scheme}://127.0.0.1:{h.info[kind][block]}{path}"


def test_announces_every_port_and_file(harness):
    info = harness.info
    assert set(info["nginx"]) == {"h2", "h1", "h1_buffering", "h1_short_idle", "basic", "untrusted"}
    assert set(info["delayed"]) == set(info["nginx"]) | {"upstream"}
    assert info["host"] == "127.0.0.1" and info["basic_user"] == "proxyuser" and len(info["basic_password"]) >= 12
    assert Path(info["ca_file"]).is_file() and Path(info["untrusted_ca_file"]).is_file()
    assert info["nginx_version"][0].isdigit() and info["pid"] > 0


def test_h2_and_h1_are_trusted_with_the_ca_only(harness):
    ca = harness.info["ca_file"]
    for block, version in (("h2", "2"), ("h1", "1.1")):
        done = curl("--http2", "--cacert", ca, "-o", "/dev/null", "-w", "%{http_version}", url(harness, block))
        assert (done.returncode, done.stdout) == (0, version), (block, done.stderr)
        done = curl("--http2", "--cacert", ca, "-o", "/dev/null", "-w", "%{http_version}",
                    url(harness, block).replace("127.0.0.1", "localhost"))
        assert (done.returncode, done.stdout) == (0, version), (block, "localhost", done.stderr)
        assert curl("-o", "/dev/null", url(harness, block)).returncode == 60  # the system's CAs do not know it


def test_proxy_headers_reach_the_upstream(harness):
    for block in ("h2", "h1"):
        done = curl("--http2", "--cacert", harness.info["ca_file"], "-H", "Authorization: Bearer abc.def",
                    url(harness, block))
        seen = json.loads(done.stdout)["headers"]
        host = f"127.0.0.1:{harness.info['nginx'][block]}"
        assert seen["host"] == host and seen["x-forwarded-host"] == host, seen
        assert seen["x-forwarded-proto"] == "https" and seen["x-forwarded-for"] == "127.0.0.1", seen
        assert seen["forwarded"] == f'proto=https;host="{host}"', seen
        assert seen["authorization"] == "Bearer abc.def", seen


def test_untrusted_block_fails_with_the_good_ca(harness):
    assert curl("--cacert", harness.info["ca_file"], "-o", "/dev/null", url(harness, "untrusted")).returncode == 60
    done = curl("--cacert", harness.info["untrusted_ca_file"], "-o", "/dev/null", "-w", "%{http_code}",
                url(harness, "untrusted"))
    assert done.stdout == "200", done.stderr


def test_basic_block_challenges_and_accepts_its_user(harness):
    info = harness.info
    done = curl("--cacert", info["ca_file"], "-D", "-", "-o", "/dev/null", url(harness, "basic"))
    head = done.stdout.lower()
    assert head.startswith("http/1.1 401"), done.stdout
    assert 'www-authenticate: basic realm="proxy-realm"' in head, done.stdout
    done = curl("--cacert", info["ca_file"], "-u", f"{info['basic_user']}:{info['basic_password']}",
                "-o", "/dev/null", "-w", "%{http_code}", url(harness, "basic"))
    assert done.stdout == "200", done.stderr
    done = curl("--cacert", info["ca_file"], "-u", f"{info['basic_user']}:wrong", "-o", "/dev/null",
                "-w", "%{http_code}", url(harness, "basic"))
    assert done.stdout == "401"


def test_delayed_ports_add_the_delay_each_way(harness):
    delay = DELAY_MS / 1000
    done = curl("-o", "/dev/null", "-w", "%{http_code} %{time_total}", url(harness, "upstream", kind="delayed"))
    code, total = done.stdout.split()
    assert code == "200" and float(total) >= 2 * delay - 0.001, done.stdout  # request there, answer back
    # TLS 1.3 through the delay: the handshake's round trip, then the request's
    done = curl("--http2", "--cacert", harness.info["ca_file"], "-o", "/dev/null",
                "-w", "%{http_code} %{http_version} %{time_total}", url(harness, "h2", kind="delayed"))
    code, version, total = done.stdout.split()
    assert (code, version) == ("200", "2") and float(total) >= 4 * delay - 0.001, done.stdout
    for block in ("h1", "basic", "untrusted", "h1_buffering", "h1_short_idle"):  # every delayed port leads to nginx
        assert curl("--cacert", harness.info["ca_file"], "-o", "/dev/null",
                    url(harness, block, kind="delayed")).returncode in (0, 60), block


def test_buffering_block_holds_back_a_slow_stream(harness):
    """4 s of stream, a frame a second: through h1 and h2 the headers and the first comment come at once (the
    upstream says X-Accel-Buffering: no); through h1_buffering nothing comes before the stream's end."""
    path = "/v2/slow-stream?seconds=4&interval=1"

    def first_byte(block: str) -> tuple[float, str]:
        done = curl("-N", "--http2", "--cacert", harness.info["ca_file"], "-w", "\n%{time_starttransfer}",
                    url(harness, block, path))
        body, _, started = done.stdout.rpartition("\n")
        return float(started), body

    with ThreadPoolExecutor(3) as pool:
        results = dict(zip(("h1", "h2", "h1_buffering"), pool.map(first_byte, ("h1", "h2", "h1_buffering"))))
    for block, (started, body) in results.items():
        assert body.startswith(": open") and body.count("data: frame") == 4, (block, body)
    assert results["h1"][0] < 3.0 and results["h2"][0] < 3.0, results  # at once, in fact
    assert results["h1_buffering"][0] >= 3.9, results  # the upstream sleeps 4 × 1 s before its last frame


def test_short_idle_block_cuts_a_quiet_stream(harness):
    t = time.monotonic()
    done = curl("-N", "--cacert", harness.info["ca_file"],
                url(harness, "h1_short_idle", "/v2/slow-stream?seconds=30&interval=30"))
    elapsed = time.monotonic() - t
    assert done.stdout.startswith(": open"), done
    assert done.returncode == 18, done  # the chunked response ended without its last chunk
    assert SHORT_IDLE <= elapsed < 20, elapsed


def test_freeze_leaves_connections_open_and_silent(harness):
    context = ssl.create_default_context(cafile=harness.info["ca_file"])
    raw = socket.create_connection(("127.0.0.1", harness.info["delayed"]["h1"]), timeout=30)
    with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        tls.sendall(b"GET /v2/slow-stream?seconds=60&interval=0.2 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        received = b""
        while b"data: frame 0" not in received:
            chunk = tls.recv(65536)
            assert chunk, received
            received += chunk
        answer = harness.command("freeze")
        assert answer["ok"] == "freeze" and answer["connections"] >= 1, answer
        tls.settimeout(0.5)  # what the proxy had written before the freeze may still be on its way
        try:
            while tls.recv(65536):
                pass
            pytest.fail("the frozen connection was closed")
        except TimeoutError:
            pass
        tls.settimeout(3)  # 15 frames would come in 3 s; nothing does, and the socket is neither closed nor reset
        with pytest.raises(TimeoutError):
            data = tls.recv(65536)
            pytest.fail(f"the frozen connection delivered {data!r}")
        answer = harness.command("thaw")
        assert answer["ok"] == "thaw" and answer["frozen"] >= 1, answer
        done = curl("--cacert", harness.info["ca_file"], "-o", "/dev/null", "-w", "%{http_code}",
                    url(harness, "h1", kind="delayed"))
        assert done.stdout == "200", done.stderr
        with pytest.raises(TimeoutError):  # still frozen: a dead path does not come back
            tls.recv(65536)
    assert harness.command("stats")["ok"] == "stats"
    assert harness.command("nonsense") == {"error": "unknown command: nonsense"}


def nginx_processes(master: int) -> set[int]:
    """The master and its workers (children of the master)."""
    found = {master}
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == master:
                found.add(int(entry.name))
        except (OSError, IndexError, ValueError):
            pass
    return found


def alive(pid: int) -> bool:
    """Running (a zombie that nobody reaped yet counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def wait_gone(pids: set[int], seconds: float = 20) -> set[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return {p for p in pids if alive(p)}


@pytest.mark.parametrize("how", ["stdin", "sigterm", "sigkill"])
def test_nginx_stops_with_the_harness(upstream, how):
    h = Harness(upstream)
    pids = nginx_processes(h.info["pid"])
    assert len(pids) >= 2 and all(alive(p) for p in pids), pids  # a master and a worker
    temp = Path(h.info["temp_dir"])
    try:
        if how == "stdin":
            h.proc.stdin.close()
        elif how == "sigterm":
            h.proc.send_signal(signal.SIGTERM)
        else:
            h.proc.kill()  # no cleanup at all: nginx learns of it from PR_SET_PDEATHSIG
        h.proc.wait(30)
        assert wait_gone(pids) == set()
        if how != "sigkill":
            assert h.proc.returncode == 0
            assert not temp.exists()
    finally:
        h.stop()
        shutil.rmtree(temp, ignore_errors=True)


def test_the_h2_block_takes_more_streams_only_when_asked():
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import net_harness
    finally:
        sys.path.pop(0)
    ports = {name: 40000 + i for i, name in enumerate(net_harness.BLOCKS)}
    plain = net_harness.nginx_config(Path("/tmp/x"), ports, "http://127.0.0.1:1", 5)
    assert "http2_max_concurrent_streams" not in plain and "worker_connections 1024;" in plain
    assert "worker_rlimit_nofile" not in plain
    many = net_harness.nginx_config(Path("/tmp/x"), ports, "http://127.0.0.1:1", 5, h2_streams=2000)
    h2 = many.split("# h2\n", 1)[1].split("}", 1)[0]
    assert "http2_max_concurrent_streams 2000;" in h2 and "keepalive_requests 10000000;" in h2
    assert "worker_connections 4256;" in many and "worker_rlimit_nofile 8512;" in many
    h1 = many.split("# h1\n", 1)[1].split("}", 1)[0]
    assert "http2_max_concurrent_streams" not in h1, "only the h2 block"
