"""`make demo`'s script (scripts/demo.sh) without compiling anything: a stand-in `swift` (SWIFT) that "builds" and a
stand-in terminal that reports the address it was given and asks the sandbox there for its stats. Checked: the build
shows progress and its errors, the demo starts its own sandbox and stops it at the end, uses a sandbox already
running on the port (and leaves it running), and refuses a port that something else answers on."""
import http.server
import json
import os
import pty
import re
import socket
import stat
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "scripts" / "demo.sh"

FAKE_SWIFT = """#!/bin/sh
case "$*" in
  *--show-bin-path*) echo "$FAKE_BIN" ;;
  build*)
    echo "Building for debugging..."
    echo "[1/2] Compiling Pichacka main.swift"
    sleep "${FAKE_BUILD_SECONDS:-0}"
    if [ -n "$FAKE_BUILD_ERROR" ]; then echo "$FAKE_BUILD_ERROR"; exit 1; fi
    echo "[2/2] Linking Pichacka"
    echo "Build complete!" ;;
  *) exit 64 ;;
esac
"""

FAKE_TERMINAL = f"""#!{sys.executable}
import os, urllib.request
base = os.environ["PROFIREST_BASE_URL"]
print("FAKE TERMINAL at", base, "tokens", os.environ["PROFIREST_TOKENS"])
print("FAKE TERMINAL sandbox pid:", os.environ.get("PROFIREST_DEMO_SANDBOX_PID") or "none")
with urllib.request.urlopen(base + "/_sandbox/stats", timeout=10) as r:
    print("FAKE TERMINAL reached the sandbox:", r.status)
"""


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_sandbox/stats", timeout=3):
            return True
    except OSError:
        return False


@pytest.fixture()
def env(tmp_path):
    if not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.skip("no .venv (make venv)")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    executable(bin_dir / "Pichacka", FAKE_TERMINAL)
    return dict(os.environ, SWIFT=str(executable(tmp_path / "swift", FAKE_SWIFT)), FAKE_BIN=str(bin_dir),
                PROFIREST_DEMO_PORT=str(free_port()), PROFIREST_SANDBOX_DB=str(tmp_path / "state.sqlite3"),
                PROFIREST_TOKENS=str(tmp_path / "tokens.json"), PROFIREST_OUTBOX=str(tmp_path / "outbox.json"),
                PROGRESS_DOT_SECONDS="1")


def demo(env, timeout=120):
    return subprocess.run([str(DEMO)], cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)


def test_starts_its_own_sandbox_shows_the_build_and_stops_the_sandbox_at_the_end(env):
    port = int(env["PROFIREST_DEMO_PORT"])
    done = demo(dict(env, FAKE_BUILD_SECONDS="2.5"))
    assert done.returncode == 0, done.stderr
    # progress on standard error: the line, dots while the build runs, how long it took
    assert "Building the example terminal (Pichacka; the first build takes about 2 min)…" in done.stderr
    assert ".. done (" in done.stderr
    assert "Compiling" not in done.stdout + done.stderr, "the build's own output stays in its log"
    assert f"Started the sandbox at http://127.0.0.1:{port} in the background (pid " in done.stderr
    pid = int(re.search(r"\(pid (\d+),", done.stderr).group(1))
    assert f"To stop it alone: kill {pid}; to start it again: .venv/bin/python -m sandbox serve --port {port}" \
        in done.stderr, "on a port of its own, the command that starts the sandbox there"
    assert f"FAKE TERMINAL at http://127.0.0.1:{port} tokens {env['PROFIREST_TOKENS']}" in done.stdout
    assert "FAKE TERMINAL reached the sandbox: 200" in done.stdout
    assert f"approve the pairing code on http://127.0.0.1:{port}/admin" in done.stdout
    assert not answers(port), "the demo's own sandbox ends with the terminal"
    # The terminal is told which sandbox the demo stops (it says so on quitting), and the demo says it stopped it.
    assert f"FAKE TERMINAL sandbox pid: {pid}" in done.stdout
    assert f"Sandbox (pid {pid}), který demo spustilo, je zastavený. / The sandbox the demo started is stopped." \
        in done.stderr


def test_uses_a_sandbox_already_running_on_the_port_and_leaves_it_running(env):
    sandbox = subprocess.Popen([str(ROOT / ".venv" / "bin" / "python"), "-m", "sandbox", "serve", "--port", "0",
                                "--db", ":memory:", "--quiet"], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    try:
        ready = json.loads(sandbox.stdout.readline())
        port = int(ready["api"].rsplit(":", 1)[1])
        done = demo(dict(env, PROFIREST_DEMO_PORT=str(port)))
        assert done.returncode == 0, done.stderr
        assert f"Using the sandbox already running at http://127.0.0.1:{port}" in done.stderr
        assert "Started the sandbox" not in done.stderr
        assert "FAKE TERMINAL reached the sandbox: 200" in done.stdout
        assert sandbox.poll() is None and answers(port), "a sandbox the demo did not start keeps running"
        assert "FAKE TERMINAL sandbox pid: none" in done.stdout, "nothing for the terminal to stop"
        assert "is stopped" not in done.stderr
    finally:
        sandbox.terminate()
        sandbox.wait(10)


def test_a_port_that_something_else_answers_on_is_refused(env):
    class NotASandbox(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotASandbox)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        done = demo(dict(env, PROFIREST_DEMO_PORT=str(server.server_address[1])))
    finally:
        server.shutdown()
    assert done.returncode == 1
    assert "something that is not the sandbox answers on port" in done.stderr
    assert "FAKE TERMINAL" not in done.stdout


def test_a_failed_build_shows_its_errors_and_starts_nothing(env):
    port = int(env["PROFIREST_DEMO_PORT"])
    done = demo(dict(env, FAKE_BUILD_ERROR="main.swift:3:1: error: cannot find 'punch' in scope"))
    assert done.returncode == 1
    assert "failed (exit 1" in done.stderr
    assert "error: cannot find 'punch' in scope" in done.stderr
    assert "FAKE TERMINAL" not in done.stdout and not answers(port)


def test_progress_on_a_terminal_shows_the_build_counter():
    """On a terminal, scripts/progress.sh shows swift build's own [n/m] counter in place instead of dots."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([str(ROOT / "scripts" / "progress.sh"), "Building…", "sh", "-c",
                                 'for i in 1 2 3; do echo "[$i/3] Compiling x$i.swift"; sleep 0.6; done'],
                                stdout=subprocess.DEVNULL, stderr=slave, env=dict(os.environ, TERM="xterm"))
        os.close(slave)
        slave = None
        seen = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the terminal's other end closed
                break
            if not chunk:
                break
            seen += chunk
        assert proc.wait(10) == 0
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)
    text = seen.decode()
    assert "\rBuilding…" in text.replace("\x1b[K", "") and "[3/3]" in text and "done (" in text
