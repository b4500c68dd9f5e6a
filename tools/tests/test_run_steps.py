"""`make test` runs every step even when one fails (scripts/run-steps.sh): one run shows every failure, lists the
failed steps, ends with the line `make-test: N passed, N failed` and fails when any step failed. Checked on a small
Makefile of its own, and on the repository's `make -n test` (which prints the steps' commands and runs none)."""
import os
import re
import signal
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN_STEPS = ROOT / "scripts" / "run-steps.sh"
SUMMARY = re.compile(r"^(\S+: )?(\d+) passed, (\d+) failed$")  # the closing line CI reads
# A make started by these tests is a top-level make, also when the tests run under `make tools-test` (a sub-make
# would print "make[1]: Leaving directory …" after the summary).
# make exports the variables of its command line (make test passes FUZZ_SEED=1 to its steps) to what its recipes run.
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES", "FUZZ_SEED")}

MAKEFILE = """
ok1:
\t@echo ran ok1 >> $(OUT)
bad:
\t@echo ran bad >> $(OUT); exit 3
ok2:
\t@echo ran ok2 >> $(OUT)
needs-bad: bad
\t@echo ran needs-bad >> $(OUT)
slow:
\t@echo ran slow >> $(OUT); sleep 30
"""


def run_steps(tmp_path, *steps, **kw):
    (tmp_path / "Makefile").write_text(MAKEFILE)
    out = tmp_path / "ran.txt"
    env = dict(CLEAN_ENV, MAKE=f"make --no-print-directory -C {tmp_path} OUT={out}")
    return subprocess.run([str(RUN_STEPS), "make-test", *steps], capture_output=True, text=True, env=env,
                          timeout=60, **kw), out


def test_every_step_runs_and_the_failures_are_listed_at_the_end(tmp_path):
    done, out = run_steps(tmp_path, "ok1", "bad", "ok2", "needs-bad")
    assert done.returncode == 1
    assert out.read_text().split("\n")[:-1] == ["ran ok1", "ran bad", "ran ok2", "ran bad"], "the steps after the failure ran"
    lines = done.stdout.rstrip("\n").split("\n")
    assert lines[-1] == "make-test: 2 passed, 2 failed"
    assert SUMMARY.match(lines[-1])
    assert "make-test: failed steps: bad needs-bad (each alone: make <step>)" in lines
    assert "==> make-test: bad FAILED (exit 2" in done.stdout  # make's own status for a failed recipe


def test_all_passed(tmp_path):
    done, _ = run_steps(tmp_path, "ok1", "ok2")
    assert done.returncode == 0
    assert done.stdout.rstrip("\n").split("\n")[-1] == "make-test: 2 passed, 0 failed"
    assert "failed steps" not in done.stdout


def test_ctrl_c_stops_the_whole_run(tmp_path):
    (tmp_path / "Makefile").write_text(MAKEFILE)
    out = tmp_path / "ran.txt"
    env = dict(CLEAN_ENV, MAKE=f"make --no-print-directory -C {tmp_path} OUT={out}")
    # A shell started in the background without job control (`cmd &` in a script, nohup) passes SIGINT on ignored,
    # and a signal ignored at a shell's start cannot be trapped: the run is started as a terminal starts it.
    proc = subprocess.Popen([str(RUN_STEPS), "make-test", "slow", "ok1"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 20
    while not (out.exists() and "slow" in out.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the signal to the whole foreground group
    try:
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert "interrupted" in err
    assert "ok1" not in out.read_text(), "no step after Ctrl-C"


def test_make_test_runs_every_step_with_the_fixed_fuzz_seed():
    done = subprocess.run(["make", "-n", "test"], cwd=ROOT, env=CLEAN_ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    steps = re.findall(r"^==> make-test: (\S+)$", done.stdout, re.M)
    makefile = (ROOT / "Makefile").read_text()
    listed = re.search(r"^TEST_STEPS := ((?:.*\\\n)*.*)$", makefile, re.M).group(1).replace("\\\n", " ").split()
    assert steps == listed
    for step in ("lint-contract", "check-generated", "build", "docs", "swift-test", "swift-test-tsan", "sandbox-test",
                 "tools-test", "demo-test", "fuzz", "dist-test"):
        assert step in steps
    fuzz = done.stdout[done.stdout.index("==> make-test: fuzz\n"):]
    assert "-seed=1 " in fuzz, "make test fuzzes with the fixed seed"
    last = done.stdout.rstrip("\n").split("\n")[-1]
    assert last == f"make-test: {len(steps)} passed, 0 failed" and SUMMARY.match(last)
    alone = subprocess.run(["make", "-n", "fuzz"], cwd=ROOT, env=CLEAN_ENV, capture_output=True, text=True, timeout=60)
    assert "-seed=" not in alone.stdout, "make fuzz alone explores with a new seed"
