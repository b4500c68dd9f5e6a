#!/usr/bin/env bash
# make demo: the sandbox on 127.0.0.1 and the example attendance terminal (Pichacka) against it.
# The terminal pairs on its first run: approve its code on the sandbox's admin page (the URL is printed),
# or from another shell with `scripts/approve.sh CODE` (or `make approve CODE=…`).
# The state is the one `make sandbox` keeps (sandbox/state.sqlite3, or PROFIREST_SANDBOX_DB), so restarting the
# sandbox either way keeps the terminal paired; `make sandbox-reset` starts clean.
# A sandbox that already answers on the port (`make sandbox` in another shell) is used as it is and left running;
# otherwise the demo starts its own in the background, says its pid (`kill PID` stops it alone, `make sandbox` starts
# it again, or `.venv/bin/python -m sandbox serve --port N` on another port) and stops it when the terminal ends.
# Progress lines go to standard error.
# SWIFT is the swift to build with (swift by default).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
SWIFT="${SWIFT:-swift}"
PORT="${PROFIREST_DEMO_PORT:-8080}"
TOKENS="${PROFIREST_TOKENS:-sandbox/demo-pichacka.json}"
OUTBOX="${PROFIREST_OUTBOX:-sandbox/demo-pichacka-outbox.json}"
url="http://127.0.0.1:$PORT"

scripts/progress.sh "Building the example terminal (Pichacka; the first build takes about 2 min)…" \
  "$SWIFT" build --product Pichacka
terminal="$("$SWIFT" build --product Pichacka --show-bin-path)/Pichacka"

# What answers on the port: 0 a sandbox, 1 nothing, 2 something else.
probe() {
  "$PY" - "$1" <<'PY'
import json, sys, urllib.error, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1] + "/_sandbox/stats", timeout=3) as r:
        body = json.load(r)
except urllib.error.URLError as e:
    sys.exit(1 if isinstance(e.reason, ConnectionRefusedError) else 2)
except Exception:  # noqa: BLE001 — an answer that is not the sandbox's
    sys.exit(2)
sys.exit(0 if isinstance(body, dict) and "requests" in body else 2)
PY
}

found=0
probe "$url" || found=$?
if [ "$found" -eq 0 ]; then
  api="$url"
  admin="$url/admin"
  echo "Using the sandbox already running at $api (not started by the demo: it keeps running when the terminal ends)." >&2
elif [ "$found" -eq 2 ]; then
  echo "demo: something that is not the sandbox answers on port $PORT: stop it, or set PROFIREST_DEMO_PORT" >&2
  exit 1
else
  mkdir -p .build
  log=$(mktemp)
  "$PY" -m sandbox serve --port "$PORT" --quiet >"$log" 2>.build/demo-sandbox.log &
  sandbox_pid=$!
  # when the terminal ends: stop the sandbox and wait for it, so the port is free at once (unless it was stopped
  # already — a sandbox started again by hand is not this one and keeps running)
  trap 'if kill "$sandbox_pid" 2>/dev/null; then wait "$sandbox_pid" 2>/dev/null
          echo "Sandbox (pid $sandbox_pid), který demo spustilo, je zastavený. / The sandbox the demo started is stopped." >&2
        fi; rm -f "$log"' EXIT
  for _ in $(seq 1 100); do
    if head -n 1 "$log" | grep -q '"ready"'; then break; fi
    if ! kill -0 "$sandbox_pid" 2>/dev/null; then
      echo "demo: the sandbox did not start (is port $PORT taken? set PROFIREST_DEMO_PORT; its log: .build/demo-sandbox.log)" >&2
      exit 1
    fi
    sleep 0.1
  done
  api=$(head -n 1 "$log" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["api"])')
  admin=$(head -n 1 "$log" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["admin"])')
  again="make sandbox"
  [ "$PORT" = 8080 ] || again="$PY -m sandbox serve --port $PORT"
  echo "Started the sandbox at $api in the background (pid $sandbox_pid, log .build/demo-sandbox.log); it stops" \
       "with the terminal." >&2
  echo "To stop it alone: kill $sandbox_pid; to start it again: $again (in another shell; the same state, and" \
       "punches made meanwhile wait in the terminal's outbox)." >&2
fi
# Paired already (the token file's state document holds an access token): nothing to approve. Only a yes or no
# comes out of this check, never the token.
paired() {
  "$PY" - "$TOKENS" <<'PY' 2>/dev/null
import json, sys
stored = json.load(open(sys.argv[1]))  # {"profirest-api:<client_id>": "<the state document as JSON text>"}
docs = [json.loads(v) if isinstance(v, str) else v for v in stored.values()]
sys.exit(0 if any(isinstance(d, dict) and d.get("access_token") for d in docs) else 1)
PY
}
if paired; then
  echo "Sandbox: $api (admin page $admin). The terminal is paired (tokens in $TOKENS)."
else
  echo "Sandbox: $api — approve the pairing code on $admin (restaurant 11), or run scripts/approve.sh CODE."
fi
echo "Demo PINs: 1234 Jana (manager), 2222 Petr and Eva (shared), 3333 Tomáš. Commands: p/o/pz/kz PIN, k, f, odparovat, q; help."
# PROFIREST_DEMO_SANDBOX_PID: the terminal says on quitting that the demo stops the sandbox it started (none when
# the sandbox was already running).
PROFIREST_BASE_URL="$api" PROFIREST_TOKENS="$TOKENS" PROFIREST_OUTBOX="$OUTBOX" \
  PROFIREST_DEMO_SANDBOX_PID="${sandbox_pid:-}" "$terminal"
