"""The example terminal end to end: Pichacka, built by `swift build`, against a sandbox started here.

A manager's approval comes through the sandbox's admin API while the terminal polls; then punches, a shared PIN,
the presence list, an unknown PIN, a restart that stays paired, and unpairing; `q` while the code is shown; and what
the terminal tells a person about each outcome of a punch — saved offline only without a connection, a server
error, an overloaded server with when it goes again, a lockout with its time, an unknown or inactive PIN, a queued
punch delivered or refused later — the help's English line, `p` without a PIN, and quitting under `make demo`.
"""
import json
import os
import queue
import re
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


def _adds(outbox: Path) -> int:
    """The writes the outbox's journal file holds as records (a line `<crc> <json>` each; `add` is a write handed in)."""
    if not outbox.exists():
        return 0
    records = [json.loads(line.split(" ", 1)[1]) for line in outbox.read_text().splitlines() if " " in line]
    assert records and records[0]["op"] == "header", "the journal's first line is its header"
    return sum(1 for r in records if r["op"] == "add")


class Terminal:
    """A running terminal whose output is read by a thread, so a test can wait for a line with a deadline."""

    def __init__(self, api: str, tokens: Path, *arguments: str, **environment: str):
        self.process = subprocess.Popen([str(_binary()), *arguments], env=dict(_env(api, tokens), **environment),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.lines: "queue.Queue[str | None]" = queue.Queue()
        self.seen = ""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def type(self, line: str) -> None:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def expect(self, pattern: str, seconds: float = 60) -> str:
        """The output up to the first line matching `pattern` (a regular expression) since the last expect."""
        seen = ""
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.time()))
            except queue.Empty:
                break
            if line is None:
                break
            seen += line
            self.seen += line
            if re.search(pattern, line):
                return seen
        raise AssertionError(f"no line matching {pattern!r} within {seconds} s; the terminal said:\n{self.seen}")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)


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
    assert "Neznámý nebo neaktivní PIN – píchnutí se nezapsalo." in out
    assert out.rstrip().endswith("Konec."), "quitting says so (no sandbox of the demo's to stop here)"
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
    assert _adds(outbox) == 1

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
    assert _adds(outbox) == 0, "the file forgets the punch and its PIN (compacted, not only marked delivered)"
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


def _fault(api: str, **fault) -> None:
    _admin(api, "POST", "/_sandbox/faults", dict({"method": "POST", "path": "/v2/restaurants/11/attendance/punches*"}, **fault))


def test_each_outcome_of_a_punch_in_its_own_words(sandbox, tmp_path):
    tokens = tmp_path / "pichacka.json"
    assert "Spárováno." in _pair_then_run(sandbox, tokens, "q\n")
    terminal = Terminal(sandbox, tokens, PROFIREST_DEMO_SANDBOX_PID="4242")
    try:
        terminal.expect("Provozovna 11")
        terminal.type("p")
        terminal.expect(r"Chybí PIN: napište p a PIN, např\. p 1234\.")
        terminal.type("help")
        terminal.expect(r"In English: p PIN clock in, o PIN clock out")

        # A server error: the punch is kept, said so in words of its own (not "offline"), and announced when sent.
        _fault(sandbox, count=1, action="status", status=500)
        terminal.type("p 1234")
        said = terminal.expect(r"Server má potíže \(.*\) – píchnutí je uložené a odešle se samo, až server zase odpoví \(čeká 1\)\.")
        assert "Uloženo offline" not in said
        terminal.expect(r"Píchnutí z fronty odesláno: příchod z \d\d:\d\d – Jana Nováková, v práci\.")

        # An overloaded server: when it goes again, from the Retry-After.
        _fault(sandbox, count=1, action="status", status=429, retry_after="3")
        terminal.type("o 1234")
        terminal.expect(r"Server je přetížený – píchnutí je uložené a odešle se za 3 s \(v \d\d:\d\d\) \(čeká 1\)\.")
        terminal.expect(r"Píchnutí z fronty odesláno: odchod z \d\d:\d\d – Jana Nováková, mimo práci\.")

        # No connection: "saved offline", then announced once the server answers again.
        _fault(sandbox, count=None, action="drop_before")
        terminal.type("p 3333")
        terminal.expect(r"Uloženo offline – odešle se, až bude spojení \(čeká 1\)\.")
        _admin(sandbox, "DELETE", "/_sandbox/faults")
        terminal.expect(r"Píchnutí z fronty odesláno: příchod z \d\d:\d\d – Tomáš Král, v práci\.")

        # A wrong PIN queued without a connection is refused when it is sent: announced, with why.
        _fault(sandbox, count=None, action="drop_before")
        terminal.type("p 0000")
        terminal.expect(r"Uloženo offline")
        _admin(sandbox, "DELETE", "/_sandbox/faults")
        terminal.expect(r"Píchnutí z fronty \(příchod z \d\d:\d\d\) server odmítl: neznámý nebo neaktivní PIN\.")

        # An inactive employee's PIN (Martin, 9999): the server does not tell it from an unknown one, nor does the terminal.
        terminal.type("p 9999")
        terminal.expect(r"Neznámý nebo neaktivní PIN – píchnutí se nezapsalo\.")

        terminal.type("q")
        terminal.expect(r"Konec\. Demo teď zastaví sandbox, který spustilo \(pid 4242\)\. / Quitting: the demo now stops "
                        r"the sandbox it started\.")
        assert terminal.process.wait(timeout=30) == 0
    finally:
        terminal.close()
    assert _adds(tmp_path / "outbox.json") == 0
    assert _admin(sandbox, "GET", "/_sandbox/commits")["punches"]["duplicated_ids"] == 0


def test_a_lockout_is_told_with_its_time_and_nothing_waits_it_out(sandbox, tmp_path):
    tokens = tmp_path / "pichacka.json"
    assert "Spárováno." in _pair_then_run(sandbox, tokens, "q\n")
    terminal = Terminal(sandbox, tokens)
    try:
        terminal.expect("Provozovna 11")
        for _ in range(5):  # five wrong PINs in five minutes lock sign-ins on this device for 300 s
            terminal.type("p 0000")
            terminal.expect(r"Neznámý nebo neaktivní PIN")
        terminal.type("p 0000")
        said = terminal.expect(r"Terminál je po špatných PINech zamčený – zkuste to za \d+ s \(v \d\d:\d\d\)\.")
        seconds = int(re.search(r"za (\d+) s", said).group(1))
        assert 280 <= seconds <= 300, said
        assert "Uloženo" not in said, "a lockout is no reason to keep the punch and wait the lock out"
        terminal.type("p 1234")
        terminal.expect(r"Terminál je po špatných PINech zamčený")
        terminal.type("f")
        terminal.expect(r"Ve frontě offline: 0")
        terminal.type("q")
        terminal.expect(r"^Konec\.$")
    finally:
        terminal.close()
    assert _adds(tmp_path / "outbox.json") == 0
