"""The example terminal end to end: Pichacka, built by `swift build`, against a sandbox started here.

A manager's approval comes through the sandbox's admin API while the terminal polls; then punches, a shared PIN,
the presence list, an unknown PIN, a restart that stays paired, and unpairing; `q` while the code is shown.
"""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _binary() -> Path:
    if os.environ.get("PICHACKA_BIN"):
        return Path(os.environ["PICHACKA_BIN"])
    out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
    path = Path(out.stdout.strip()) / "Pichacka"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `swift build` first (make test does)")
    return path


@pytest.fixture()
def sandbox():
    proc = subprocess.Popen([sys.executable, "-m", "sandbox", "serve", "--port", "0", "--db", ":memory:", "--quiet",
                            "--poll-interval", "1"],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    ready = json.loads(proc.stdout.readline())
    yield ready["api"]
    proc.terminate()
    proc.wait(timeout=10)


def _admin(api: str, method: str, path: str, body: dict | None = None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(api + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read() or b"null")


def _approve_when_asked(api: str, stop: threading.Event) -> None:
    while not stop.is_set():
        pending = _admin(api, "GET", "/_sandbox/pairings")
        items = pending if isinstance(pending, list) else pending.get("pairings") or pending.get("data") or []
        if items:
            _admin(api, "POST", f"/_sandbox/pairings/{items[0]['user_code']}/approve", {"restaurant_id": "11"})
            return
        time.sleep(0.2)


def _env(api: str, tokens: Path) -> dict:
    return dict(os.environ, PROFIREST_BASE_URL=api, PROFIREST_TOKENS=str(tokens),
                PROFIREST_OUTBOX=str(tokens.with_name("outbox.json")))


def _run(api: str, tokens: Path, commands: str) -> str:
    env = _env(api, tokens)
    done = subprocess.run([str(_binary())], input=commands, env=env, capture_output=True, text=True, timeout=90)
    return done.stdout


def _read_until(terminal: subprocess.Popen, text: str, seconds: float = 30) -> str:
    """Standard output up to the line with `text` (all of it when the terminal ends first)."""
    seen = ""
    deadline = time.time() + seconds
    while text not in seen and time.time() < deadline:
        line = terminal.stdout.readline()
        if not line:
            break
        seen += line
    return seen


def _pair_then_run(api: str, tokens: Path, commands: str, typed_while_pairing: str = "") -> str:
    """The first run: the commands are typed once the terminal says it is paired (a `q` while the code is shown
    would end it); `typed_while_pairing` is typed while the code is shown and waits for the command loop."""
    stop = threading.Event()
    terminal = subprocess.Popen([str(_binary())], env=_env(api, tokens), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
    try:
        seen = _read_until(terminal, "KÓD: ")
        terminal.stdin.write(typed_while_pairing)
        terminal.stdin.flush()
        threading.Thread(target=_approve_when_asked, args=(api, stop), daemon=True).start()
        seen += _read_until(terminal, "Spárováno.")
        # Not `communicate`: it reads the pipe's descriptor directly, past what `readline` has already buffered
        # (a line printed right after "Spárováno." would be lost); the rest is read from the same buffered stream.
        terminal.stdin.write(commands)
        terminal.stdin.close()
        timer = threading.Timer(90, terminal.kill)
        timer.start()
        try:
            rest = terminal.stdout.read()
            terminal.wait(timeout=10)
        finally:
            timer.cancel()
        return seen + rest
    finally:
        stop.set()
        if terminal.poll() is None:
            terminal.kill()
            terminal.wait(timeout=10)


def test_pairs_punches_and_remembers_the_pairing(sandbox, tmp_path):
    tokens = tmp_path / "pichacka.json"
    # `k` and `help` typed while the code is shown: help answers at once, k waits for the command loop.
    out = _pair_then_run(sandbox, tokens, "p 1234\np 2222\n2\nk\npz 1234\nkz 1234\no 1234\np 0000\nq\n",
                         typed_while_pairing="help\nk\n")
    assert "KÓD: " in out and "Spárováno." in out and "Čeká se, až vedoucí potvrdí kód" in out
    assert out.index("Nikdo není v práci.") > out.index("Provozovna 11."), "a line typed while pairing is kept"
    assert "Provozovna 11." in out
    assert "OK: Jana Nováková – v práci" in out
    assert "Tento PIN má více lidí:" in out and "OK: Eva Dvořáková – v práci" in out
    assert "  Eva Dvořáková: v práci" in out
    assert "OK: Jana Nováková – na přestávce" in out
    assert "OK: Jana Nováková – mimo práci" in out
    assert "Neznámý PIN." in out
    assert oct(tokens.stat().st_mode & 0o777) == "0o600"
    assert "1234" not in tokens.read_text(), "PINs are never stored"

    again = _run(sandbox, tokens, "o 2222\n1\nodparovat\n")
    assert "KÓD" not in again, "the second run stays paired"
    assert "OK: Petr Svoboda" in again or "Teď to nejde" in again
    assert "Spárování zapomenuto." in again
    assert "access_token" not in tokens.read_text()


def test_a_punch_without_a_connection_waits_in_the_outbox_through_a_kill(sandbox, tmp_path):
    tokens = tmp_path / "pichacka.json"
    assert "Spárováno." in _pair_then_run(sandbox, tokens, "q\n")

    # The server drops every punch: the terminal keeps it offline, and is then killed outright.
    _admin(sandbox, "POST", "/_sandbox/faults",
           {"action": "drop_before", "path": "/v2/restaurants/11/attendance/punches*", "count": None})
    terminal = subprocess.Popen([str(_binary())], env=_env(sandbox, tokens), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
    terminal.stdin.write("p 1234\n")
    terminal.stdin.flush()
    seen = ""
    deadline = time.time() + 30
    while "Uloženo offline" not in seen and time.time() < deadline:
        seen += terminal.stdout.readline()
    terminal.kill()
    terminal.wait(timeout=10)
    assert "Uloženo offline – odešle se, až bude spojení (čeká 1)." in seen
    outbox = tmp_path / "outbox.json"
    assert oct(outbox.stat().st_mode & 0o777) == "0o600"
    assert len(json.loads(outbox.read_text())["items"]) == 1

    # The server is back: the next start delivers the punch, once, and the file forgets it and its PIN.
    _admin(sandbox, "DELETE", "/_sandbox/faults")
    verbose = subprocess.run([str(_binary()), "--verbose"], input="f\nq\n", env=_env(sandbox, tokens),
                             capture_output=True, text=True, timeout=90)
    again = verbose.stdout
    assert "Ve frontě offline čeká 1 píchnutí." in again
    # --verbose: what the library did, on standard error, without the PIN or a token.
    assert "profirest: outbox delivered" in verbose.stderr
    assert "/v2/restaurants/11/attendance/punches/batch → 200" in verbose.stderr
    assert "secret" not in verbose.stderr and "access_token" not in verbose.stderr
    after = _run(sandbox, tokens, "k\nq\n")
    assert "  Jana Nováková: v práci" in after
    assert json.loads(outbox.read_text())["items"] == []
    punches = _admin(sandbox, "GET", "/_sandbox/commits")["punches"]
    assert punches["duplicated_ids"] == 0


def test_q_while_the_code_is_shown_ends_the_terminal_at_once(sandbox, tmp_path):
    tokens = tmp_path / "pichacka.json"
    terminal = subprocess.Popen([str(_binary())], env=_env(sandbox, tokens), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
    try:
        assert "KÓD: " in _read_until(terminal, "KÓD: ")
        assert len(_admin(sandbox, "GET", "/_sandbox/pairings")["data"]) == 1
        started = time.time()
        terminal.stdin.write("q\n")  # stdin stays open: the terminal must not wait for its end
        terminal.stdin.flush()
        assert terminal.wait(timeout=5) == 0
        assert time.time() - started < 3
        assert "Párování zrušeno." in terminal.stdout.read()
    finally:
        if terminal.poll() is None:
            terminal.kill()
            terminal.wait(timeout=10)
    # The library does not tell the server: the code is abandoned (it expires), nothing was paired or stored.
    assert all(d["client_id"] != "profirest-dochazka" for d in _admin(sandbox, "GET", "/_sandbox/devices")["data"])
    assert not tokens.exists() or "access_token" not in tokens.read_text()
